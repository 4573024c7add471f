package io.freqcap.operators;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class HistoryCacheTest {
    private static final byte[] A = {1};
    private static final byte[] B = {2};

    @Test
    void slotsAreRoundedUpToAPowerOfTwo() {
        assertEquals(0, new HistoryCache(0).slots());
        assertEquals(2, new HistoryCache(1).slots());
        assertEquals(4, new HistoryCache(3).slots());
        assertEquals(1 << 20, new HistoryCache(1 << 20).slots());
        assertEquals(1 << 21, new HistoryCache((1 << 20) + 1).slots());
        assertThrows(IllegalArgumentException.class, () -> new HistoryCache(-1));
        assertThrows(IllegalArgumentException.class, () -> new HistoryCache((1 << 30) + 1));
    }

    @Test
    void returnsWhatWasPutForThatUserOnly() {
        HistoryCache c = new HistoryCache(1 << 10);
        c.put(42, A);
        assertArrayEquals(A, c.get(42));
        assertNull(c.get(43));
        c.put(42, B);
        assertArrayEquals(B, c.get(42), "the newest history wins");
    }

    @Test
    void aUserInTheSameSlotReplacesTheOlderOne() {
        HistoryCache c = new HistoryCache(2);
        c.put(0, A);
        long other = 1;
        while (c.get(0) != null) { // find a user with slot 0's slot
            c.put(other++, B);
        }
        assertArrayEquals(B, c.get(other - 1));
        assertNull(c.get(0), "never another user's history");
    }

    @Test
    void clearForgetsEveryone() {
        HistoryCache c = new HistoryCache(64);
        for (long u = 0; u < 64; u++) {
            c.put(u, A);
        }
        c.clear();
        for (long u = 0; u < 64; u++) {
            assertNull(c.get(u));
        }
    }

    @Test
    void zeroSlotsCachesNothing() {
        HistoryCache c = new HistoryCache(0);
        c.put(42, A);
        assertNull(c.get(42));
    }
}
