package io.freqcap.schema.segment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.SharedFiles;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.segment.SegmentBitmap.Format;
import java.util.Arrays;
import java.util.Random;
import java.util.function.LongPredicate;
import org.junit.jupiter.api.Test;

/** Reads bitmaps written by other Roaring implementations, and round-trips our own. */
class SegmentBitmapTest {
    static byte[] fixture(String name) throws Exception {
        return SharedFiles.read("testdata/roaring/" + name);
    }

    /** Every member and a sample of non-members, against the documented contents. */
    static void assertMembers(
            SegmentBitmap b, long cardinality, LongPredicate expected, long upTo) {
        assertEquals(cardinality, b.cardinality());
        long counted = 0;
        for (long id = 0; id < upTo; id++) {
            boolean member = expected.test(id);
            if (member != b.contains(id)) {
                throw new AssertionError("id " + id + " expected member=" + member);
            }
            counted += member ? 1 : 0;
        }
        assertTrue(counted <= cardinality);
    }

    static final LongPredicate JAVA_FIXTURE =
            id ->
                    (id < 100_000 && id % 1000 == 0)
                            || (id >= 300_000 && id < 600_000 && id % 3 == 0)
                            || (id >= 700_000 && id < 800_000);

    @Test
    void readsJavaPortable32WithoutRuns() throws Exception {
        SegmentBitmap b = SegmentBitmap.read(fixture("bitmapwithoutruns.bin"), Format.ROARING32);
        assertMembers(b, 200_100, JAVA_FIXTURE, 1_000_000);
    }

    @Test
    void readsJavaPortable32WithRuns() throws Exception {
        SegmentBitmap b = SegmentBitmap.read(fixture("bitmapwithruns.bin"), Format.ROARING32);
        assertMembers(b, 200_100, JAVA_FIXTURE, 1_000_000);
    }

    @Test
    void readsCRoaringPortable64() throws Exception {
        SegmentBitmap b = SegmentBitmap.read(fixture("portable_bitmap64.bin"), Format.ROARING64);
        LongPredicate low =
                o ->
                        (o <= 0x09000)
                                || (o >= 0x0A000 && o <= 0x10000)
                                || o == 0x20000
                                || o == 0x20005
                                || (o >= 0x80000 && o < 0x90000 && o % 2 == 0);
        assertEquals(188_424, b.cardinality());
        for (long hi = 0; hi < 3; hi++) {
            for (long o = 0; o < 0xA0000; o++) {
                assertEquals(
                        hi < 2 && low.test(o),
                        b.contains((hi << 32) + o),
                        "hi " + hi + " offset " + o);
            }
        }
    }

    @Test
    void readsCRoaring64MapLayout() throws Exception {
        SegmentBitmap b = SegmentBitmap.read(fixture("bitmap64.bin"), Format.ROARING64);
        assertEquals(1_032_769, b.cardinality());
        for (long id = 0; id < 70_000; id++) {
            assertEquals(id < 65_536 && id % 2 == 0, b.contains(id), "id " + id);
        }
        for (long id = (1L << 32) - 5; id < (1L << 32) + 1_000_005; id++) {
            assertEquals(
                    id >= (1L << 32) && id < (1L << 32) + 1_000_000, b.contains(id), "id " + id);
        }
        assertTrue(b.contains(1L << 48));
        assertFalse(b.contains((1L << 48) + 1));
        assertEquals(0, b.min());
        assertEquals(1L << 48, b.max());
    }

    /**
     * Lookups read the containers' arrays directly (bitmap words, interpolation search in sorted
     * arrays): every id of chunks of every shape answers as the member set says, before and after a
     * write/read round trip.
     */
    @Test
    void containsAnswersForEveryContainerShape() throws Exception {
        Random rnd = new Random(11);
        java.util.BitSet expected = new java.util.BitSet();
        int chunks = 14;
        for (int c = 0; c < chunks; c++) {
            int base = c << 16;
            switch (c % 7) {
                case 0 ->
                        rnd.ints(1 + rnd.nextInt(4000), 0, 1 << 16)
                                .forEach(i -> expected.set(base + i));
                case 1 -> { // skewed: a tight cluster plus outliers at both ends
                    rnd.ints(300, 40_000, 40_400).forEach(i -> expected.set(base + i));
                    expected.set(base);
                    expected.set(base + 65_535);
                }
                case 2 -> rnd.ints(30_000, 0, 1 << 16).forEach(i -> expected.set(base + i));
                case 3 -> { // runs
                    expected.set(base + 100, base + 5_000);
                    expected.set(base + 20_000, base + 20_001);
                    expected.set(base + 60_000, base + 65_536);
                }
                case 4 -> expected.set(base + rnd.nextInt(1 << 16));
                case 5 -> { // geometric gaps: dense at the start, sparse at the end
                    for (int i = 1; i < (1 << 16); i = i + 1 + i / 8) {
                        expected.set(base + i);
                    }
                }
                default -> expected.set(base, base + (1 << 16)); // full
            }
        }
        long[] ids = expected.stream().asLongStream().toArray();
        SegmentBitmap built = SegmentBitmap.of(ids);
        SegmentBitmap read = SegmentBitmap.read(built.write(Format.ROARING32), Format.ROARING32);
        for (SegmentBitmap b : new SegmentBitmap[] {built, read}) {
            assertMembers(b, ids.length, id -> expected.get((int) id), (long) (chunks + 1) << 16);
        }
        // The search alone, on exact arrays of every size and spread.
        for (int run = 0; run < 2_000; run++) {
            int n = 1 + rnd.nextInt(4096);
            int spread = 1 + rnd.nextInt(1 << 16);
            int from = rnd.nextInt((1 << 16) - spread + 1);
            char[] members = new char[n];
            for (int i = 0; i < n; i++) {
                members[i] = (char) (from + rnd.nextInt(spread));
            }
            Arrays.sort(members);
            for (int probe = 0; probe < 50; probe++) {
                int key = probe % 2 == 0 ? members[rnd.nextInt(n)] : rnd.nextInt(1 << 16);
                assertEquals(
                        Arrays.binarySearch(members, (char) key) >= 0,
                        SortedMembers.contains(members, key),
                        "key " + key + " in " + n + " members from " + from + " spread " + spread);
            }
        }
    }

    @Test
    void roundTripsBothFormats() throws Exception {
        Random rnd = new Random(3);
        for (int run = 0; run < 50; run++) {
            long[] small = rnd.longs(1 + rnd.nextInt(5000), 0, 1L << 32).toArray();
            long[] wide = rnd.longs(1 + rnd.nextInt(5000), 0, Long.MAX_VALUE).toArray();
            for (long[] ids : new long[][] {small, wide}) {
                SegmentBitmap b = SegmentBitmap.of(ids);
                SegmentBitmap back =
                        SegmentBitmap.read(b.write(Format.ROARING64), Format.ROARING64);
                assertEquals(Arrays.stream(ids).distinct().count(), back.cardinality());
                for (long id : ids) {
                    assertTrue(back.contains(id));
                }
                if (b.fitsRoaring32()) {
                    SegmentBitmap b32 =
                            SegmentBitmap.read(b.write(Format.ROARING32), Format.ROARING32);
                    assertEquals(b.cardinality(), b32.cardinality());
                    assertTrue(Arrays.stream(ids).allMatch(b32::contains));
                }
            }
        }
        assertEquals(
                0,
                SegmentBitmap.read(SegmentBitmap.of().write(Format.ROARING64), Format.ROARING64)
                        .cardinality());
    }

    @Test
    void corruptTruncatedAndOverlongInputIsRejected() throws Exception {
        byte[] good = SegmentBitmap.of(42, 1001, 1002, 77_000).write(Format.ROARING32);
        assertThrows(
                MalformedRecordException.class,
                () -> SegmentBitmap.read(Arrays.copyOf(good, good.length - 3), Format.ROARING32));
        byte[] longer = Arrays.copyOf(good, good.length + 1);
        assertEquals(
                "roaring32: bytes after the end of the bitmap",
                assertThrows(
                                MalformedRecordException.class,
                                () -> SegmentBitmap.read(longer, Format.ROARING32))
                        .getMessage());
        byte[] garbage = new byte[64];
        new Random(1).nextBytes(garbage);
        assertThrows(
                MalformedRecordException.class,
                () -> SegmentBitmap.read(garbage, Format.ROARING32));
        byte[] wide = SegmentBitmap.of(1, 1L << 40).write(Format.ROARING64);
        assertThrows(
                MalformedRecordException.class,
                () -> SegmentBitmap.read(Arrays.copyOf(wide, 10), Format.ROARING64));
        assertEquals(
                "format: expected roaring32 or roaring64, got \"bloom\"",
                assertThrows(MalformedRecordException.class, () -> Format.of("bloom"))
                        .getMessage());
    }

    @Test
    void readsTheContractsInlineExample() throws Exception {
        byte[] bytes =
                java.util.Base64.getDecoder()
                        .decode("OjAAAAIAAAAAAAIAAQAAABgAAAAeAAAAKgDpA+oDyCw=");
        SegmentBitmap b = SegmentBitmap.read(bytes, Format.ROARING32);
        assertEquals(4, b.cardinality());
        assertTrue(b.contains(42) && b.contains(1001) && b.contains(1002) && b.contains(77_000));
        assertFalse(b.contains(43));
    }

    /** Zeros for ever, like /dev/zero. */
    static final class Zeros extends java.io.InputStream {
        long read;

        @Override
        public int read() {
            read++;
            return 0;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            Arrays.fill(b, off, off + len, (byte) 0);
            read += len;
            return len;
        }
    }

    @Test
    void endlessInputIsRejectedAfterReadingLittle() throws Exception {
        for (Format f : Format.values()) {
            Zeros zeros = new Zeros();
            MalformedRecordException e =
                    assertThrows(
                            MalformedRecordException.class,
                            () -> SegmentBitmap.read(zeros, f, 1L << 30));
            assertTrue(zeros.read <= 1 << 17, f + " read " + zeros.read + " bytes");
            assertTrue(e.getMessage().startsWith(f.wireName + ": "), e.getMessage());
        }
    }

    @Test
    void inputOverTheLimitIsRejected() throws Exception {
        SegmentBitmap.Builder big = new SegmentBitmap.Builder();
        new Random(3).longs(200_000, 0, 1L << 31).forEach(big::add);
        SegmentBitmap built = big.build();
        byte[] bytes = built.write(Format.ROARING32);
        assertEquals(
                "roaring32: larger than the limit of 1000 bytes",
                assertThrows(
                                MalformedRecordException.class,
                                () ->
                                        SegmentBitmap.read(
                                                new java.io.ByteArrayInputStream(bytes),
                                                Format.ROARING32,
                                                1000))
                        .getMessage());
        assertEquals(
                built.cardinality(),
                SegmentBitmap.read(
                                new java.io.ByteArrayInputStream(bytes),
                                Format.ROARING32,
                                bytes.length)
                        .cardinality(),
                "exactly the limit is allowed");
    }

    @Test
    void errorTextsCarryNoBytesOfTheInput() throws Exception {
        byte[] passwd =
                "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
                        .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        for (Format f : Format.values()) {
            String error =
                    assertThrows(
                                    MalformedRecordException.class,
                                    () -> SegmentBitmap.read(passwd, f))
                            .getMessage();
            // "root" read as a little-endian int or long is a long number; no number of the
            // file's may appear, nor its text.
            assertFalse(error.matches(".*\\d{4,}.*"), error);
            assertFalse(error.contains("root"), error);
        }
    }
}
