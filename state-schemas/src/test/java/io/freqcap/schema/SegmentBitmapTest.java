package io.freqcap.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.SegmentBitmap.Format;
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
                "roaring32: 1 bytes after the bitmap",
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
}
