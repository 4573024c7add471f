package io.freqcap.schema.segment;

import io.freqcap.schema.common.MalformedRecordException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.roaringbitmap.ArrayContainer;
import org.roaringbitmap.BitmapContainer;
import org.roaringbitmap.Container;
import org.roaringbitmap.ContainerArrays;
import org.roaringbitmap.ContainerPointer;
import org.roaringbitmap.RoaringBitmap;

/**
 * The members of a segment: a set of userIds read from, and written to, the portable Roaring
 * formats that the Java, C, Go and Python implementations share (contract.md §4).
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
     * RoaringBitmap's binary search over container keys. Each entry is what a lookup reads
     * directly: the {@code long[]} words of a bitmap container, the sorted {@code char[]} of an
     * array container (searched by interpolation: ids of a segment are spread evenly enough that
     * the first guess lands within a cache line of the answer), or the container itself (runs). The
     * arrays are the containers' own, not copies. At most 65,536 references, 256 KB, per segment.
     */
    private final Object[] low32;

    /**
     * Per entry of {@link #low32}: the cardinality of an array container (where {@link #touch}
     * guesses), else 0. Kept apart so that the guess does not wait for the array's header.
     */
    private final char[] low32Sizes;

    private SegmentBitmap(int[] highs, RoaringBitmap[] buckets) {
        this.highs = highs;
        this.buckets = buckets;
        Object[] index = null;
        char[] sizes = null;
        if (highs.length > 0 && highs[0] == 0 && !buckets[0].isEmpty()) {
            index = new Object[(buckets[0].last() >>> 16) + 1];
            sizes = new char[index.length];
            ContainerPointer c = buckets[0].getContainerPointer();
            while (c.getContainer() != null) {
                Object form = lookupForm(c.getContainer());
                index[c.key()] = form;
                sizes[c.key()] = form instanceof char[] members ? (char) members.length : 0;
                c.advance();
            }
        }
        this.low32 = index;
        this.low32Sizes = sizes;
    }

    private static Object lookupForm(Container c) {
        if (c instanceof BitmapContainer b) {
            return ContainerArrays.words(b);
        }
        if (c instanceof ArrayContainer a) {
            char[] members = ContainerArrays.members(a);
            int n = a.getCardinality();
            return members.length == n ? members : Arrays.copyOf(members, n);
        }
        return c;
    }

    public boolean contains(long userId) {
        if ((userId >>> 32) == 0 && low32 != null) {
            int key = (int) userId >>> 16;
            if (key >= low32.length) {
                return false;
            }
            Object o = low32[key];
            if (o instanceof long[] words) {
                // Java masks long shifts to 6 bits: 1L << userId is the bit within its word.
                return (words[((int) userId & 0xFFFF) >>> 6] & (1L << userId)) != 0;
            }
            if (o instanceof char[] members) {
                return SortedMembers.contains(members, (int) userId & 0xFFFF);
            }
            return o != null && ((Container) o).contains((char) userId);
        }
        int high = (int) (userId >>> 32);
        if (highs.length == 1) {
            return highs[0] == high && buckets[0].contains((int) userId);
        }
        int i = Arrays.binarySearch(highs, high); // signed order equals unsigned for ids >= 0
        return i >= 0 && buckets[i].contains((int) userId);
    }

    /**
     * Reads the memory {@link #contains} will read first for this id and returns what it found
     * (meaningless to callers). Touching every segment before looking any up lets the CPU wait for
     * all their cache misses at once: the loads here do not depend on each other, where the
     * lookups' branches would make it wait segment by segment.
     */
    public int touch(long userId) {
        if ((userId >>> 32) != 0 || low32 == null) {
            return 0;
        }
        int key = (int) userId >>> 16;
        if (key >= low32.length) {
            return 0;
        }
        Object o = low32[key];
        int n = low32Sizes[key];
        if (n > 0) {
            return ((char[]) o)[(((int) userId & 0xFFFF) * n) >>> 16];
        }
        if (o instanceof long[] words) {
            return (int) words[((int) userId & 0xFFFF) >>> 6];
        }
        return 0;
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
        try {
            return read(new ByteArrayInputStream(bytes), format, Long.MAX_VALUE);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte array never fails to read
        }
    }

    /**
     * Reads and validates a bitmap from a stream, streamed: at most {@code maxBytes} bytes are
     * read, and memory grows with the containers read, never with what a header claims. Error texts
     * name the problem and never carry bytes of the input (it may be any file).
     *
     * @throws MalformedRecordException for a corrupt, truncated or over-long input, or one larger
     *     than {@code maxBytes}
     * @throws IOException when the stream itself fails
     */
    public static SegmentBitmap read(InputStream source, Format format, long maxBytes)
            throws IOException, MalformedRecordException {
        SegmentBitmapCodec.Buckets b =
                SegmentBitmapCodec.read(
                        source, format == Format.ROARING32, format.wireName, maxBytes);
        return new SegmentBitmap(b.highs(), b.buckets());
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
        return SegmentBitmapCodec.write(highs, buckets, format == Format.ROARING32, sizeInBytes());
    }
}
