package io.freqcap.operators.capping.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    @Test
    void dirtyHistoriesAreWrittenOnceInKeyOrderAndNeverDisplaced() throws Exception {
        HistoryCache c = new HistoryCache(1 << 12);
        java.util.List<Long> written = new java.util.ArrayList<>();
        Random rnd = new Random(9);
        java.util.Set<Long> dirty = new java.util.HashSet<>();
        for (int i = 0; i < 3_000; i++) {
            long u = rnd.nextInt(1_000_000) + (i % 2 == 0 ? 0 : 1L << 50); // both sort paths
            if (c.putDirty(u, A, A.length)) {
                dirty.add(u);
            }
        }
        assertTrue(dirty.size() > 1_000 && dirty.size() < 3_000, "some collided: " + dirty.size());
        // A dirty slot is never taken by another user: not by a later dirty one (above, where
        // colliding users were refused), not by a clean one.
        for (long u : dirty) {
            for (long other = u + 1; other < u + 50; other++) {
                if (!dirty.contains(other)) {
                    c.put(other, B, B.length);
                }
            }
        }
        for (long u : dirty) {
            assertArrayEquals(A, get(c, u));
        }
        int n =
                c.flushDirty(
                        u -> (int) (u % 7),
                        (u, b, off, len) -> {
                            written.add(u);
                            assertArrayEquals(A, Arrays.copyOfRange(b, off, off + len));
                        });
        assertEquals(dirty.size(), n);
        assertEquals(dirty, new java.util.HashSet<>(written), "each once");
        for (int k = 1; k < written.size(); k++) {
            long a = written.get(k - 1);
            long b = written.get(k);
            assertTrue(a % 7 < b % 7 || (a % 7 == b % 7 && a < b), a + " before " + b);
        }
        assertEquals(0, c.flushDirty(u -> 0, (u, b, off, len) -> written.add(-1L)), "now clean");
        for (long u : dirty) {
            assertArrayEquals(A, get(c, u), "still cached, clean");
        }
    }

    @Test
    void aHistoryDirtiedAgainOrWrittenThroughMeanwhileIsFlushedOnlyIfStillDirty() throws Exception {
        HistoryCache c = new HistoryCache(1 << 10);
        byte[] tooLong = new byte[HistoryCache.MAX_BYTES + 1];
        assertTrue(c.putDirty(1, A, A.length));
        assertTrue(c.putDirty(1, B, B.length)); // dirty again: one write, the newest bytes
        assertTrue(c.putDirty(2, A, A.length));
        assertTrue(!c.putDirty(2, tooLong, tooLong.length)); // the caller wrote it through
        assertTrue(c.putDirty(2, B, B.length)); // and dirty again: listed twice, written once
        assertTrue(c.putDirty(3, A, A.length));
        c.forget(3); // keyed state holds it now
        java.util.List<String> written = new java.util.ArrayList<>();
        int n =
                c.flushDirty(
                        u -> 0,
                        (u, b, off, len) ->
                                written.add(
                                        u
                                                + ":"
                                                + Arrays.toString(
                                                        Arrays.copyOfRange(b, off, off + len))));
        assertEquals(java.util.List.of("1:[4]", "2:[4]"), written);
        assertEquals(2, n);
        assertTrue(c.putDirty(4, A, A.length));
        c.clear();
        assertEquals(0, c.flushDirty(u -> 0, (u, b, off, len) -> written.add("after clear")));
        assertEquals(2, written.size());
    }

    @Test
    void aCacheNeverTakesMoreThanAnEighthOfTheHeap() {
        long gib = 1L << 30;
        int defaultSlots = 1 << 20;
        // deploy/config.yaml's 4 GB TaskManager: ~1.5 GB of heap holds the default (~143 MB)
        assertEquals(defaultSlots, HistoryCache.slotsWithin(defaultSlots, 3 * gib / 2));
        // a 1.25 GB TaskManager (~300 MB heap, the OutOfMemoryError a cluster test found)
        int small = HistoryCache.slotsWithin(defaultSlots, 300L << 20);
        assertEquals(1 << 18, small);
        assertTrue((long) small * HistoryCache.BYTES_PER_SLOT <= (300L << 20) / 8);
        assertEquals(0, HistoryCache.slotsWithin(defaultSlots, 1_000));
        assertEquals(0, HistoryCache.slotsWithin(0, 300L << 20), "off stays off");
        assertEquals(1000, HistoryCache.slotsWithin(1000, 300L << 20), "what fits is kept");
    }
}
