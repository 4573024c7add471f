package io.freqcap.operators.segments;

import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.segment.SegmentBitmap;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.zip.CRC32;
import java.util.zip.CheckedInputStream;

/**
 * One in-memory copy per TaskManager JVM of each uri-loaded segment version, shared by the capping
 * tasks of all its slots. An explicit, reference-counted cache (the one kind of static mutable
 * state worth having): every {@link #acquire} is paired with a {@link #release}, and a bitmap
 * leaves memory when its last holder releases it. Nothing in it is checkpointed; state holds only
 * the uri.
 */
public final class SegmentCache {
    private SegmentCache() {}

    /** A segment version as loaded from a uri. */
    public record Key(String segmentId, long version, String uri, SegmentBitmap.Format format) {}

    /** A loaded bitmap and the CRC-32 of its bytes. */
    public record Loaded(SegmentBitmap bitmap, long crc32) {}

    private static final class Entry {
        final Loaded loaded;
        int holders;

        Entry(Loaded loaded) {
            this.loaded = loaded;
        }
    }

    private static final Map<Key, Entry> ENTRIES = new HashMap<>();

    /** The bitmap of a key, read through the loader only if no task in this JVM holds it yet. */
    public static Loaded acquire(Key key, SegmentLoader loader)
            throws IOException, MalformedRecordException {
        synchronized (ENTRIES) {
            Entry e = ENTRIES.get(key);
            if (e != null) {
                e.holders++;
                return e.loaded;
            }
        }
        // Read outside the lock: another slot may load another segment meanwhile.
        Loaded loaded = read(key.uri(), key.format(), loader);
        synchronized (ENTRIES) {
            Entry e = ENTRIES.computeIfAbsent(key, k -> new Entry(loaded));
            e.holders++;
            return e.loaded;
        }
    }

    /** Reads and checks a bitmap file, bounded by the loader, with the CRC-32 of its bytes. */
    public static Loaded read(String uri, SegmentBitmap.Format format, SegmentLoader loader)
            throws IOException, MalformedRecordException {
        try (CheckedInputStream in = new CheckedInputStream(loader.open(uri), new CRC32())) {
            SegmentBitmap bitmap = SegmentBitmap.read(in, format, loader.maxBytes());
            return new Loaded(bitmap, in.getChecksum().getValue());
        }
    }

    public static void release(Key key) {
        synchronized (ENTRIES) {
            Entry e = ENTRIES.get(key);
            if (e != null && --e.holders <= 0) {
                ENTRIES.remove(key);
            }
        }
    }

    /** Whether a task of this JVM holds the key's bitmap. */
    public static boolean holds(Key key) {
        synchronized (ENTRIES) {
            return ENTRIES.containsKey(key);
        }
    }

    /** Bitmaps held in this JVM (for tests and metrics). */
    public static int size() {
        synchronized (ENTRIES) {
            return ENTRIES.size();
        }
    }
}
