package org.roaringbitmap;

/**
 * The arrays inside RoaringBitmap's containers, for freqcap's segment lookups ({@code
 * io.freqcap.schema.segment.SegmentBitmap}). This class sits in RoaringBitmap's package because the
 * arrays are package-private there and the public copies ({@code toLongBuffer}, iterators) would
 * double the memory of every bitmap a TaskManager holds. Read-only: callers never write to them.
 */
public final class ContainerArrays {
    private ContainerArrays() {}

    /** The 1,024 words of a bitmap container (bit {@code low} = word {@code low >>> 6}). */
    public static long[] words(BitmapContainer c) {
        return c.bitmap;
    }

    /** The sorted members of an array container; may be longer than its cardinality. */
    public static char[] members(ArrayContainer c) {
        return c.content;
    }
}
