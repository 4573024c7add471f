package io.freqcap.operators.capping.history;

import java.util.Arrays;

/** The timestamps of one channel of a {@link LongHistory}, ascending, growing at the end. */
public final class TimestampColumn {
    static final TimestampColumn EMPTY = new TimestampColumn();

    private long[] ts = new long[16];
    private int start;
    private int end;

    int size() {
        return end - start;
    }

    void add(long t) {
        if (end == ts.length) {
            int n = end - start;
            long[] to = start >= ts.length / 4 ? ts : new long[ts.length * 2];
            System.arraycopy(ts, start, to, 0, n);
            ts = to;
            start = 0;
            end = n;
        }
        int pos = end > start && ts[end - 1] <= t ? end : firstAfter(ts, start, end, t);
        System.arraycopy(ts, pos, ts, pos + 1, end - pos);
        ts[pos] = t;
        end++;
    }

    /** Removes one occurrence of {@code t}; returns how many are left. */
    int remove(long t) {
        int pos = firstAfter(ts, start, end, t) - 1;
        if (pos >= start && ts[pos] == t) {
            System.arraycopy(ts, pos + 1, ts, pos, end - pos - 1);
            end--;
        }
        return end - start;
    }

    /** Drops the timestamps at or before {@code cutoff}; returns how many are left. */
    int dropThrough(long cutoff) {
        start = firstAfter(ts, start, end, cutoff);
        return end - start;
    }

    int count(long after, long upTo) {
        if (upTo <= after) {
            return 0;
        }
        return firstAfter(ts, start, end, upTo) - firstAfter(ts, start, end, after);
    }

    long kthLatest(int k) {
        if (k < 1 || k > size()) {
            throw new IllegalArgumentException("fewer entries in scope than " + k);
        }
        return ts[end - k];
    }

    long[] timestampsAfter(long after) {
        return Arrays.copyOfRange(ts, firstAfter(ts, start, end, after), end);
    }

    /** The first index in [lo, hi) of sorted {@code a} whose value is greater than {@code x}. */
    static int firstAfter(long[] a, int lo, int hi, long x) {
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (a[mid] <= x) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
