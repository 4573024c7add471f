package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Limit;
import java.util.function.LongPredicate;

/**
 * One rolling {@code campaigns} limit (window w, max L) over ascending times t, for {@link
 * DistinctCampaigns#earliest}. The intervals containing t start at the entries in (t − w, t] and at
 * t. An interval starting at an entry is the same whatever t: each entry's is worked out once
 * ({@link #badStarts}), and t fails if one in range breaks the limit (prefix sums, two ends moving
 * on). The one starting at t is kept as counts per campaign of the entries in [t, t + w), whose two
 * ends also only move on. So a sweep over m times costs O(n + m).
 */
final class RollingCampaigns {
    private final LongPredicate atTheEdges;
    private final CampaignEntries e;
    private final int own;
    private final long w;
    private final int max;
    // Prefix sums: bad[k] is how many entries before k start an interval that breaks it.
    private final int[] bad;
    // Starts in (t - w, t]: entries startsFrom .. startsTo - 1.
    private int startsFrom;
    private int startsTo;
    // The interval [t, t + w): entries leave .. enter - 1, counted per campaign.
    private final int[] inside;
    private int distinct;
    private int enter;
    private int leave;

    /**
     * @param own the message's campaign's number
     * @param bad the limit's {@link #badStarts}
     * @param atTheEdges whether the limit passes at a time whose window leaves the longs, asked of
     *     the plain scan instead
     */
    RollingCampaigns(CampaignEntries e, int own, Limit limit, int[] bad, LongPredicate atTheEdges) {
        this.atTheEdges = atTheEdges;
        this.e = e;
        this.own = own;
        this.w = limit.windowMillis();
        this.max = limit.max();
        this.bad = bad;
        this.inside = new int[e.campaigns + 1];
    }

    boolean passes(long at) {
        if (at < Long.MIN_VALUE + w || at > Long.MAX_VALUE - w) {
            // Where at ± w leaves the longs the scan's sums wrap (see DistinctCampaigns): ask the
            // scan, for these times only (none is a real timestamp).
            return atTheEdges.test(at);
        }
        long[] ts = e.ts;
        int n = e.n;
        while (startsFrom < n && ts[startsFrom] < at - w + 1) {
            startsFrom++;
        }
        while (startsTo < n && ts[startsTo] <= at) {
            startsTo++;
        }
        if (bad[startsTo] > bad[startsFrom]) {
            return false;
        }
        // Entries before at + w come in first, so none leaves before it came in.
        while (enter < n && ts[enter] < at + w) {
            if (inside[e.ids[enter++]]++ == 0) {
                distinct++;
            }
        }
        while (leave < n && ts[leave] < at) {
            if (--inside[e.ids[leave++]] == 0) {
                distinct--;
            }
        }
        return distinct + (inside[own] == 0 ? 1 : 0) <= max;
    }

    /**
     * For each entry k, whether the interval [ts[k], ts[k] + w) breaks a limit of max L (its
     * campaigns with the message's own number more than L), as prefix sums: {@code out[k]} is how
     * many of the entries before k do. One sweep, the interval's two ends moving on.
     */
    static int[] badStarts(CampaignEntries e, int own, long w, int max) {
        long[] ts = e.ts;
        int n = e.n;
        int[] inside = new int[e.campaigns + 1];
        int distinct = 0;
        int[] out = new int[n + 1];
        int enter = 0;
        int leave = 0;
        for (int k = 0; k < n; k++) {
            long s = ts[k];
            // s + w past Long.MAX_VALUE: every later entry is in the interval.
            while (enter < n && (s > Long.MAX_VALUE - w || ts[enter] < s + w)) {
                if (inside[e.ids[enter++]]++ == 0) {
                    distinct++;
                }
            }
            while (ts[leave] < s) {
                if (--inside[e.ids[leave++]] == 0) {
                    distinct--;
                }
            }
            int withOwn = distinct + (inside[own] == 0 ? 1 : 0);
            out[k + 1] = out[k] + (withOwn > max ? 1 : 0);
        }
        return out;
    }
}
