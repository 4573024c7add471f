package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Limit;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * Whether a message passes the rolling limits of its scopes at times asked in ascending order: what
 * {@link IntervalScan#passes} answers, without reading a window's entries for each time. A search
 * over thousands of candidate times (a late message under a week's limit and a {@code campaigns}
 * limit, say) then costs O(n + m), not O(n·m).
 *
 * <p>For one limit (window w, max L) over a scope's entries ts, a message at t fails if an interval
 * [s, s + w) containing t holds L entries already. The intervals that matter start at an entry in
 * (t − w, t] or at t itself ({@link IntervalScan}). One starting at entry k holds the same entries
 * whatever t: whether it holds L is worked out once per entry, as prefix sums, and the entries in
 * range are two indexes that only move on as t grows. The one starting at t is counted with two
 * more such indexes.
 */
final class RollingPasses implements LongPredicate {
    private final List<One> limits = new ArrayList<>();

    /** The rolling limits of these scopes, over the entries read for them. */
    RollingPasses(List<IntervalScan.Scoped> scopes) {
        for (IntervalScan.Scoped s : scopes) {
            for (Limit l : s.limits()) {
                limits.add(new One(s.ts(), l.windowMillis(), l.max()));
            }
        }
    }

    @Override
    public boolean test(long at) {
        for (One l : limits) {
            if (!l.passes(at)) {
                return false;
            }
        }
        return true;
    }

    /** One limit of one scope. */
    private static final class One {
        private final long[] ts;
        private final long w;
        private final int max;
        // full[k]: how many of the entries before k start an interval holding max entries.
        private final int[] full;
        private int startsFrom;
        private int startsTo;
        private int enter;
        private int leave;

        One(long[] ts, long w, int max) {
            this.ts = ts;
            this.w = w;
            this.max = max;
            int n = ts.length;
            this.full = new int[n + 1];
            int end = 0;
            for (int k = 0; k < n; k++) {
                // Differences, not sums: no timestamp overflows (as IntervalScan).
                while (end < n && ts[end] - ts[k] < w) {
                    end++;
                }
                full[k + 1] = full[k] + (end - k >= max ? 1 : 0);
            }
        }

        boolean passes(long at) {
            if (max == 0) {
                return false;
            }
            if (at < Long.MIN_VALUE + w || at > Long.MAX_VALUE - w) {
                // No real timestamp is this near the ends of the longs: the plain scan.
                return IntervalScan.fullestInterval(ts, ts.length, at, w) < max;
            }
            int n = ts.length;
            while (startsFrom < n && ts[startsFrom] <= at - w) {
                startsFrom++;
            }
            while (startsTo < n && ts[startsTo] <= at) {
                startsTo++;
            }
            if (full[startsTo] > full[startsFrom]) {
                return false;
            }
            // The interval [at, at + w).
            while (leave < n && ts[leave] < at) {
                leave++;
            }
            enter = Math.max(enter, leave);
            while (enter < n && ts[enter] - at < w) {
                enter++;
            }
            return enter - leave < max;
        }
    }
}
