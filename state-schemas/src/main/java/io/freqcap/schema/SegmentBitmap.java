package io.freqcap.schema;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.roaringbitmap.Container;
import org.roaringbitmap.ContainerPointer;
import org.roaringbitmap.RoaringBitmap;

/**
 * The members of a segment: a set of userIds read from, and written to, the portable Roaring
 * formats that the Java, C, Go and Python implementations share (SPEC §4).
 *
 * <ul>
 *   <li>{@code roaring32}: the 32-bit portable format, ids below 2^32.
 *   <li>{@code roaring64}: the 64-bit portable format: a 64-bit little-endian bucket count, then
 *       per bucket a 32-bit little-endian key (the high 32 bits of its ids, strictly increasing)
 *       and a 32-bit portable bitmap of the low 32 bits.
 * </ul>
 *
 * Bitmaps from outside are untrusted: every container is validated after reading, bucket keys must
 * increase, and trailing or missing bytes are errors. Immutable once read.
 */
public final class SegmentBitmap {
    public enum Format {
        ROARING32("roaring32"),
        ROARING64("roaring64");

        public final String wireName;

        Format(String wireName) {
            this.wireName = wireName;
        }

        public static Format of(String wireName) throws MalformedRecordException {
            for (Format f : values()) {
                if (f.wireName.equals(wireName)) {
                    return f;
                }
            }
            throw new MalformedRecordException(
                    "format: expected roaring32 or roaring64, got \"" + wireName + "\"");
        }
    }

    /** High 32 bits of the ids in each bucket, increasing; buckets[i] holds their low 32 bits. */
    private final int[] highs;

    private final RoaringBitmap[] buckets;

    /**
     * The containers of ids below 2^32, indexed by their high 16 bits: one array load instead of
     * RoaringBitmap's binary search over container keys, which was most of a segment lookup (at
     * most 65,536 references, 256 KB, per segment).
     */
    private final Container[] low32;

    private SegmentBitmap(int[] highs, RoaringBitmap[] buckets) {
        this.highs = highs;
        this.buckets = buckets;
        Container[] index = null;
        if (highs.length > 0 && highs[0] == 0 && !buckets[0].isEmpty()) {
            index = new Container[(buckets[0].last() >>> 16) + 1];
            ContainerPointer c = buckets[0].getContainerPointer();
            while (c.getContainer() != null) {
                index[c.key()] = c.getContainer();
                c.advance();
            }
        }
        this.low32 = index;
    }

    public boolean contains(long userId) {
        if ((userId >>> 32) == 0 && low32 != null) {
            int key = (int) userId >>> 16;
            Container c = key < low32.length ? low32[key] : null;
            return c != null && c.contains((char) userId);
        }
        int high = (int) (userId >>> 32);
        if (highs.length == 1) {
            return highs[0] == high && buckets[0].contains((int) userId);
        }
        int i = Arrays.binarySearch(highs, high); // signed order equals unsigned for ids >= 0
        return i >= 0 && buckets[i].contains((int) userId);
    }

    /** Every member, in increasing order. */
    public void forEach(java.util.function.LongConsumer action) {
        for (int i = 0; i < highs.length; i++) {
            long high = (long) highs[i] << 32;
            buckets[i].forEach(
                    (org.roaringbitmap.IntConsumer)
                            low -> action.accept(high | (low & 0xFFFFFFFFL)));
        }
    }

    public long cardinality() {
        long n = 0;
        for (RoaringBitmap b : buckets) {
            n += b.getLongCardinality();
        }
        return n;
    }

    public long min() {
        return highs.length == 0
                ? -1
                : ((long) highs[0] << 32) | (buckets[0].first() & 0xFFFFFFFFL);
    }

    public long max() {
        int last = highs.length - 1;
        return last < 0 ? -1 : ((long) highs[last] << 32) | (buckets[last].last() & 0xFFFFFFFFL);
    }

    /** Bytes of this bitmap in memory and in roaring64 form, about equal. */
    public long sizeInBytes() {
        long n = 8;
        for (RoaringBitmap b : buckets) {
            n += 4 + b.serializedSizeInBytes();
        }
        return n;
    }

    public boolean fitsRoaring32() {
        return highs.length == 0 || (highs.length == 1 && highs[0] == 0);
    }

    /** Collects ids in any order; memory is the bitmap's own, whatever the number of ids. */
    public static final class Builder {
        private final java.util.TreeMap<Integer, RoaringBitmap> buckets = new java.util.TreeMap<>();
        private RoaringBitmap low = null;

        public Builder add(long userId) {
            if (userId < 0) {
                throw new IllegalArgumentException("userIds are never negative: " + userId);
            }
            int high = (int) (userId >>> 32);
            if (high == 0) {
                if (low == null) {
                    low = buckets.computeIfAbsent(0, k -> new RoaringBitmap());
                }
                low.add((int) userId);
            } else {
                buckets.computeIfAbsent(high, k -> new RoaringBitmap()).add((int) userId);
            }
            return this;
        }

        /** The bitmap, run-optimized. */
        public SegmentBitmap build() {
            return SegmentBitmap.build(
                    new ArrayList<>(buckets.keySet()), new ArrayList<>(buckets.values()));
        }
    }

    public static SegmentBitmap of(long... userIds) {
        long[] sorted = userIds.clone();
        Arrays.sort(sorted);
        List<Integer> highs = new ArrayList<>();
        List<RoaringBitmap> buckets = new ArrayList<>();
        for (long id : sorted) {
            if (id < 0) {
                throw new IllegalArgumentException("userIds are never negative: " + id);
            }
            int high = (int) (id >>> 32);
            if (highs.isEmpty() || highs.get(highs.size() - 1) != high) {
                highs.add(high);
                buckets.add(new RoaringBitmap());
            }
            buckets.get(buckets.size() - 1).add((int) id);
        }
        return build(highs, buckets);
    }

    private static SegmentBitmap build(List<Integer> highs, List<RoaringBitmap> buckets) {
        int[] h = new int[highs.size()];
        for (int i = 0; i < h.length; i++) {
            h[i] = highs.get(i);
            buckets.get(i).runOptimize();
        }
        return new SegmentBitmap(h, buckets.toArray(new RoaringBitmap[0]));
    }

    /**
     * Reads and validates a bitmap.
     *
     * @throws MalformedRecordException saying what is wrong with a corrupt, truncated or over-long
     *     input
     */
    public static SegmentBitmap read(byte[] bytes, Format format) throws MalformedRecordException {
        ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        List<Integer> highs = new ArrayList<>();
        List<RoaringBitmap> buckets = new ArrayList<>();
        try {
            if (format == Format.ROARING32) {
                highs.add(0);
                buckets.add(readBitmap(in, "bitmap"));
            } else {
                long count = in.getLong();
                if (count < 0 || count > (1L << 32)) {
                    throw new MalformedRecordException(
                            "roaring64: bucket count "
                                    + Long.toUnsignedString(count)
                                    + " is impossible");
                }
                long previous = -1;
                for (long b = 0; b < count; b++) {
                    long key = in.getInt() & 0xFFFFFFFFL;
                    if (key <= previous) {
                        throw new MalformedRecordException(
                                "roaring64: bucket keys must increase, got "
                                        + key
                                        + " after "
                                        + previous);
                    }
                    if (key > Integer.MAX_VALUE) {
                        throw new MalformedRecordException(
                                "roaring64: ids at or above 2^63 are not userIds (bucket "
                                        + key
                                        + ")");
                    }
                    previous = key;
                    highs.add((int) key);
                    buckets.add(readBitmap(in, "bucket " + key));
                }
            }
        } catch (java.nio.BufferUnderflowException e) {
            throw new MalformedRecordException(format.wireName + ": truncated");
        }
        if (in.hasRemaining()) {
            throw new MalformedRecordException(
                    format.wireName + ": " + in.remaining() + " bytes after the bitmap");
        }
        int[] h = new int[highs.size()];
        for (int i = 0; i < h.length; i++) {
            h[i] = highs.get(i);
        }
        return new SegmentBitmap(h, buckets.toArray(new RoaringBitmap[0]));
    }

    private static RoaringBitmap readBitmap(ByteBuffer in, String what)
            throws MalformedRecordException {
        RoaringBitmap bitmap = new RoaringBitmap();
        ByteBuffer slice = in.slice().order(ByteOrder.LITTLE_ENDIAN);
        try {
            bitmap.deserialize(slice);
        } catch (IOException | RuntimeException e) {
            throw new MalformedRecordException(
                    what
                            + ": not a portable Roaring bitmap ("
                            + e.getClass().getSimpleName()
                            + (e.getMessage() == null ? "" : ": " + e.getMessage())
                            + ")");
        }
        int size = bitmap.serializedSizeInBytes();
        if (size > in.remaining()) {
            throw new MalformedRecordException(what + ": truncated");
        }
        if (!Boolean.TRUE.equals(bitmap.validate())) {
            throw new MalformedRecordException(what + ": corrupt containers");
        }
        in.position(in.position() + size);
        return bitmap;
    }

    /**
     * Guesses the format of serialized bytes: the 32-bit portable format starts with its cookie
     * (12346, or 12347 with run containers, little-endian), which no plausible roaring64 bucket
     * count does.
     */
    public static Format detect(byte[] bytes) {
        if (bytes.length >= 4) {
            int cookie = (bytes[0] & 0xFF) | (bytes[1] & 0xFF) << 8;
            if (cookie == 12346 || cookie == 12347) {
                return Format.ROARING32;
            }
        }
        return Format.ROARING64;
    }

    /** Writes roaring32 (all ids below 2^32) or roaring64. */
    public byte[] write(Format format) {
        if (format == Format.ROARING32 && !fitsRoaring32()) {
            throw new IllegalStateException("ids at or above 2^32 need roaring64");
        }
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream((int) sizeInBytes());
            if (format == Format.ROARING32) {
                (highs.length == 0 ? new RoaringBitmap() : buckets[0])
                        .serialize(new DataOutputStream(bytes));
            } else {
                ByteBuffer header = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
                bytes.write(header.putLong(highs.length).array());
                for (int i = 0; i < highs.length; i++) {
                    bytes.write(
                            ByteBuffer.allocate(4)
                                    .order(ByteOrder.LITTLE_ENDIAN)
                                    .putInt(highs[i])
                                    .array());
                    buckets[i].serialize(new DataOutputStream(bytes));
                }
            }
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
