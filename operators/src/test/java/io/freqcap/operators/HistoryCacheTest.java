package io.freqcap.operators;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class HistoryCacheTest {
    private static final byte[] A = {1, 2, 3};
    private static final byte[] B = {4};

    private static byte[] get(HistoryCache c, long user) {
        byte[] out = new byte[HistoryCache.MAX_BYTES];
        return Arrays.copyOf(out, c.get(user, out));
    }

    @Test
    void slotsAreRoundedUpToAPowerOfTwo() {
        assertEquals(0, new HistoryCache(0).slots());
        assertEquals(2, new HistoryCache(1).slots());
        assertEquals(4, new HistoryCache(3).slots());
        assertEquals(1 << 20, new HistoryCache(1 << 20).slots());
        assertEquals(1 << 21, new HistoryCache((1 << 20) + 1).slots());
        assertThrows(IllegalArgumentException.class, () -> new HistoryCache(-1));
        assertThrows(IllegalArgumentException.class, () -> new HistoryCache((1 << 26) + 1));
    }

    @Test
    void returnsWhatWasPutForThatUserOnly() {
        HistoryCache c = new HistoryCache(1 << 10);
        c.put(42, A, A.length);
        assertArrayEquals(A, get(c, 42));
        assertArrayEquals(new byte[0], get(c, 43));
        c.put(42, B, B.length);
        assertArrayEquals(B, get(c, 42), "the newest history wins");
    }

    @Test
    void aUserInTheSameSlotReplacesTheOlderOne() {
        HistoryCache c = new HistoryCache(2);
        c.put(0, A, A.length);
        long other = 1;
        while (get(c, 0).length > 0) { // until a user takes user 0's slot
            c.put(other++, B, B.length);
        }
        assertArrayEquals(B, get(c, other - 1));
    }

    @Test
    void aHistoryTooLongForASlotEmptiesIt() {
        HistoryCache c = new HistoryCache(1 << 10);
        byte[] longest = new byte[HistoryCache.MAX_BYTES];
        Arrays.fill(longest, (byte) 7);
        c.put(42, longest, longest.length);
        assertArrayEquals(longest, get(c, 42));
        byte[] tooLong = new byte[HistoryCache.MAX_BYTES + 1];
        c.put(42, tooLong, tooLong.length);
        assertEquals(0, get(c, 42).length, "never the older, shorter history");
    }

    @Test
    void manyUsersOverManyChunksReadBackOrMissNeverWrong() {
        HistoryCache c = new HistoryCache(1 << 17); // 8 chunks
        Random rnd = new Random(5);
        long[] users = new long[300_000];
        for (int i = 0; i < users.length; i++) {
            users[i] = rnd.nextLong() >>> 1;
            byte[] v = value(users[i]);
            c.put(users[i], v, v.length);
        }
        int hits = 0;
        for (long u : users) {
            byte[] got = get(c, u);
            if (got.length > 0) {
                hits++;
                assertArrayEquals(value(u), got);
            }
        }
        org.junit.jupiter.api.Assertions.assertTrue(
                hits > 90_000 && hits <= 1 << 17, "hits: " + hits);
    }

    private static byte[] value(long user) {
        byte[] v = new byte[1 + (int) (user % HistoryCache.MAX_BYTES)];
        Arrays.fill(v, (byte) user);
        return v;
    }

    @Test
    void clearForgetsEveryone() {
        HistoryCache c = new HistoryCache(64);
        for (long u = 0; u < 64; u++) {
            c.put(u, A, A.length);
        }
        c.clear();
        for (long u = 0; u < 64; u++) {
            assertEquals(0, get(c, u).length);
        }
    }

    @Test
    void zeroSlotsCachesNothing() {
        HistoryCache c = new HistoryCache(0);
        c.put(42, A, A.length);
        assertEquals(0, get(c, 42).length);
    }
}
