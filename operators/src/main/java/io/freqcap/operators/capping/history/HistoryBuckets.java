package io.freqcap.operators.capping.history;

import io.freqcap.schema.history.UserHistory;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The time buckets a {@link LongHistory} is stored in (the entries of each {@code millis} of time
 * form one {@link UserHistory}), and which of them changed since the last write: in time order the
 * newest, and the oldest as entries are pruned.
 */
final class HistoryBuckets {
    private final long millis;
    private final Set<Long> changed = new HashSet<>();

    HistoryBuckets(long millis) {
        if (millis <= 0) {
            throw new IllegalArgumentException("bucketMillis must be positive: " + millis);
        }
        this.millis = millis;
    }

    long millis() {
        return millis;
    }

    /** The bucket of timestamp {@code t}. */
    long of(long t) {
        return Math.floorDiv(t, millis);
    }

    /** The bucket of {@code t} changed. */
    void changedAt(long t) {
        changed.add(of(t));
    }

    /** Bucket {@code b} changed. */
    void changed(long b) {
        changed.add(b);
    }

    boolean hasChanges() {
        return !changed.isEmpty();
    }

    /** Forgets what changed: it was written another way (or is gone). */
    void markWritten() {
        changed.clear();
    }

    /** The buckets changed since the last call, each with its entries (empty: delete it). */
    Map<Long, UserHistory> takeChanged(EntryArrays e) {
        Map<Long, UserHistory> out = new TreeMap<>();
        for (long b : changed) {
            long from = b * millis;
            int lo = e.firstAfter(from - 1);
            int hi =
                    from > Long.MAX_VALUE - millis
                            ? e.end
                            : TimestampColumn.firstAfter(e.ts, lo, e.end, from + millis - 1);
            out.put(b, e.slice(lo, hi));
        }
        changed.clear();
        return out;
    }

    /** Every bucket of {@code e}, as {@link #takeChanged} would give them, in time order. */
    Map<Long, UserHistory> all(EntryArrays e) {
        Map<Long, UserHistory> out = new TreeMap<>();
        int lo = e.start;
        while (lo < e.end) {
            long b = of(e.ts[lo]);
            long next = (b + 1) * millis;
            int hi = TimestampColumn.firstAfter(e.ts, lo, e.end, next - 1);
            out.put(b, e.slice(lo, hi));
            lo = hi;
        }
        return out;
    }
}
