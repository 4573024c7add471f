package io.freqcap.schema.segment;

import io.freqcap.schema.common.MalformedRecordException;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.roaringbitmap.RoaringBitmap;

/**
 * Reads and writes the portable Roaring formats of segment bitmaps, as buckets of 32-bit bitmaps
 * keyed by the high 32 bits of their ids. Reading is streamed and bounded and validates as it goes:
 * the input is untrusted (any file a segment update names).
 */
public final class SegmentBitmapCodec {
    private SegmentBitmapCodec() {}

    /** High 32 bits of the ids in each bucket, increasing; buckets[i] holds their low 32 bits. */
    record Buckets(int[] highs, RoaringBitmap[] buckets) {}

    /**
     * Reads and validates a bitmap from a stream, streamed: at most {@code maxBytes} bytes are
     * read, and memory grows with the containers read, never with what a header claims. Error texts
     * name the problem and never carry bytes of the input (it may be any file).
     *
     * @throws MalformedRecordException for a corrupt, truncated or over-long input, or one larger
     *     than {@code maxBytes}
     * @throws IOException when the stream itself fails
     */
    static Buckets read(InputStream source, boolean roaring32, String wireName, long maxBytes)
            throws IOException, MalformedRecordException {
        DataInputStream in =
                new DataInputStream(
                        new BufferedInputStream(new Bounded(source, maxBytes), 1 << 16));
        List<Integer> highs = new ArrayList<>();
        List<RoaringBitmap> buckets = new ArrayList<>();
        try {
            if (roaring32) {
                highs.add(0);
                buckets.add(readBitmap(in, wireName));
            } else {
                long count = Long.reverseBytes(in.readLong());
                if (count < 0 || count > (1L << 32)) {
                    throw new MalformedRecordException("roaring64: impossible bucket count");
                }
                long previous = -1;
                for (long b = 0; b < count; b++) {
                    long key = Integer.reverseBytes(in.readInt()) & 0xFFFFFFFFL;
                    if (key <= previous) {
                        throw new MalformedRecordException(
                                "roaring64: bucket keys must increase (bucket " + b + ")");
                    }
                    if (key > Integer.MAX_VALUE) {
                        throw new MalformedRecordException(
                                "roaring64: ids at or above 2^63 are not userIds (bucket "
                                        + b
                                        + ")");
                    }
                    previous = key;
                    highs.add((int) key);
                    buckets.add(readBitmap(in, "roaring64: bucket " + b));
                }
            }
            if (in.read() >= 0) {
                throw new MalformedRecordException(
                        wireName + ": bytes after the end of the bitmap");
            }
        } catch (EOFException e) {
            throw new MalformedRecordException(wireName + ": truncated");
        } catch (TooLarge e) {
            throw new MalformedRecordException(
                    wireName + ": larger than the limit of " + maxBytes + " bytes");
        } catch (SourceFailure e) {
            throw (IOException) e.getCause();
        }
        int[] h = new int[highs.size()];
        for (int i = 0; i < h.length; i++) {
            h[i] = highs.get(i);
        }
        return new Buckets(h, buckets.toArray(new RoaringBitmap[0]));
    }

    private static RoaringBitmap readBitmap(DataInputStream in, String what)
            throws IOException, MalformedRecordException {
        RoaringBitmap bitmap = new RoaringBitmap();
        try {
            bitmap.deserialize(in);
        } catch (EOFException | TooLarge | SourceFailure e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            // Nothing of RoaringBitmap's message: it quotes what it read (a cookie read from
            // /etc/passwd is "root" as a number).
            throw new MalformedRecordException(what + ": not a portable Roaring bitmap");
        }
        if (!Boolean.TRUE.equals(bitmap.validate())) {
            throw new MalformedRecordException(what + ": corrupt containers");
        }
        return bitmap;
    }

    /** Thrown by {@link Bounded} past its limit. */
    private static final class TooLarge extends IOException {
        private static final long serialVersionUID = 1L;
    }

    /** The stream itself failed (a file system's error): not the bitmap's fault. */
    private static final class SourceFailure extends IOException {
        private static final long serialVersionUID = 1L;

        SourceFailure(IOException cause) {
            super(cause);
        }
    }

    /** Reads at most {@code max} bytes of a stream; one more is {@link TooLarge}. */
    private static final class Bounded extends FilterInputStream {
        private final long max;
        private long count;

        Bounded(InputStream in, long max) {
            super(in);
            this.max = max;
        }

        @Override
        public int read() throws IOException {
            int b;
            try {
                b = super.read();
            } catch (IOException e) {
                throw new SourceFailure(e);
            }
            if (b >= 0 && ++count > max) {
                throw new TooLarge();
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n;
            try {
                n = super.read(b, off, len);
            } catch (IOException e) {
                throw new SourceFailure(e);
            }
            if (n > 0 && (count += n) > max) {
                throw new TooLarge();
            }
            return n;
        }
    }

    static byte[] write(int[] highs, RoaringBitmap[] buckets, boolean roaring32, long sizeHint) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream((int) sizeHint);
            if (roaring32) {
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
