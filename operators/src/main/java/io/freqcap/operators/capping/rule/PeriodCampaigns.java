package io.freqcap.operators.capping.rule;

import java.util.Arrays;

/**
 * The distinct campaigns of every period some entry falls in, with the message's own, for a
 * calendar {@code campaigns} limit in {@link DistinctCampaigns#earliest}: the entries' (label,
 * campaign) pairs sorted and counted once, O(n log n); then a period's count is a binary search.
 */
final class PeriodCampaigns {
    private final long[] periods;
    private final int[] withOwn;

    /**
     * @param label each entry's period label
     * @param own the message's campaign's number
     */
    PeriodCampaigns(CampaignEntries e, long[] label, int own) {
        int n = e.n;
        long[] sorted = label.clone();
        Arrays.sort(sorted);
        int u = 0;
        for (int i = 0; i < n; i++) {
            if (u == 0 || sorted[i] != sorted[u - 1]) {
                sorted[u++] = sorted[i];
            }
        }
        periods = Arrays.copyOf(sorted, u);
        // A pair as one long: the period's index above, the campaign's number below.
        long[] pairs = new long[n];
        for (int i = 0; i < n; i++) {
            pairs[i] = (long) Arrays.binarySearch(periods, label[i]) << 32 | e.ids[i];
        }
        Arrays.sort(pairs);
        withOwn = new int[u];
        boolean[] hasOwn = new boolean[u];
        for (int i = 0; i < n; i++) {
            if (i == 0 || pairs[i] != pairs[i - 1]) {
                int p = (int) (pairs[i] >>> 32);
                withOwn[p]++;
                hasOwn[p] |= (int) pairs[i] == own;
            }
        }
        for (int p = 0; p < u; p++) {
            withOwn[p] += hasOwn[p] ? 0 : 1;
        }
    }

    /** The distinct campaigns of the entries in period {@code label}, with the message's own. */
    int withOwn(long label) {
        int p = Arrays.binarySearch(periods, label);
        return p < 0 ? 1 : withOwn[p];
    }

    /**
     * Each entry's label of {@code period} at its own offset (an entry's period is fixed whatever
     * the message's zone, contract.md §6), worked out once.
     */
    static long[] labels(CampaignEntries e, String period) {
        int p = periodIndex(period);
        if (e.labels[p] == null) {
            long[] out = new long[e.n];
            for (int i = 0; i < e.n; i++) {
                out[i] = Periods.label(period, e.ts[i], e.offsets[i]);
            }
            e.labels[p] = out;
        }
        return e.labels[p];
    }

    /** As {@link Periods#label} tells periods apart: by first letter. */
    static int periodIndex(String period) {
        return switch (period.charAt(0)) {
            case 'd' -> 0;
            case 'w' -> 1;
            default -> 2;
        };
    }
}
