package io.freqcap.operators.segments;

import io.freqcap.schema.segment.SegmentBitmap;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * One segment as a {@link SegmentTable} holds it: its members (a bitmap and the add/remove deltas
 * since its load), where they came from, and the shared copy it holds. A deleted segment is a
 * tombstone that keeps only its version.
 */
final class KnownSegment {
    final String id;
    final long version;
    final int priority;
    final SegmentSource source;
    final SegmentBitmap base;
    final Roaring64NavigableMap added;
    final Roaring64NavigableMap removed;
    final boolean deleted;

    /** The shared copy this segment holds, for uri loads; null otherwise. */
    SegmentCache.Key cacheKey;

    // Most segments have no deltas: skip their lookups (half the cost of a resolution).
    final boolean anyAdded;
    final boolean anyRemoved;

    KnownSegment(
            String id,
            long version,
            int priority,
            SegmentSource source,
            SegmentBitmap base,
            Roaring64NavigableMap added,
            Roaring64NavigableMap removed,
            boolean deleted) {
        this.id = id;
        this.version = version;
        this.priority = priority;
        this.source = source;
        this.base = base;
        this.added = added;
        this.removed = removed;
        this.deleted = deleted;
        this.anyAdded = !added.isEmpty();
        this.anyRemoved = !removed.isEmpty();
    }

    /** A deleted segment: only its version is kept, so older loads stay stale. */
    static KnownSegment tombstone(String id, long version) {
        return new KnownSegment(
                id,
                version,
                0,
                null,
                SegmentBitmap.of(),
                new Roaring64NavigableMap(),
                new Roaring64NavigableMap(),
                true);
    }

    boolean contains(long userId) {
        if (anyRemoved && removed.contains(userId)) {
            return false;
        }
        return base.contains(userId) || (anyAdded && added.contains(userId));
    }

    KnownSegment holding(SegmentCache.Key key) {
        this.cacheKey = key;
        return this;
    }

    KnownSegment withVersion(long v) {
        return new KnownSegment(id, v, priority, source, base, added, removed, deleted)
                .holding(cacheKey);
    }

    /** What state keeps of this segment: a JSON descriptor. */
    String describe() {
        return (deleted
                        ? SegmentDescriptor.tombstone(version)
                        : new SegmentDescriptor(
                                version,
                                false,
                                priority,
                                source,
                                source.uri() == null ? 0 : cacheKey.version(),
                                added,
                                removed))
                .toJson();
    }
}
