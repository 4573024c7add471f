package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.history.CountedHistory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;

/**
 * The {@code campaigns} limits of one rule for one message of a campaign (contract.md §3, §6
 * "Distinct campaigns"): with C(I) the campaigns of the counted entries in an interval or period I
 * plus the message's own, the message passes a rolling limit only if |C(I)| ≤ max for every
 * interval [s, s + w) containing its time, and a calendar limit only if |C(P)| ≤ max for its period
 * P. The fullest interval containing a time starts at it or at an entry before it (sliding a start
 * over empty space loses no entry), so checking those starts is exact. Plain Java.
 *
 * <p>Cost, for n entries with a campaign (the history is read whole, once per decision, and its
 * campaigns numbered): {@link #violations} reads, per rolling limit, the entries within a window of
 * the time, and per calendar limit every entry once: O(n). {@link #earliest} costs as much when the
 * time asked about passes (the common case), and O(n log n) when it must look further: its
 * candidate times are swept once in ascending order, each limit answering from what it worked out
 * for the candidate before (see {@link Rolling} and {@link PeriodCounts}), not by reading the
 * entries again.
 */
final class DistinctCampaigns {
    static final String SCOPE = "campaigns";

    /** Up to this many campaigns are looked up by a scan; a user with more gets a map. */
    private static final int SCANNED = 8;

    private final List<Limit> limits;
    private final ZoneClock zone;
    private long[] ts;
    private int[] offsets;
    // Each entry's campaign as a number: 0 .. campaigns - 1, in order of first appearance.
    private int[] ids;
    private int n;
    private String[] names = new String[4];
    private int campaigns;
    private HashMap<String, Integer> byName;

    /** The message's campaign's number; {@code campaigns} (no entry's) when no entry has it. */
    private final int own;

    // Scratch for one time's scan of a rolling limit (cleared after each) and of a period.
    private final int[] count;
    private final boolean[] present;
    private final int[] seen;
    private int stamp;

    // A time violations found a limit broken at: the rule asks earliest from it next.
    private boolean failing;
    private long failingAt;

    // Worked out when first asked, as they do not depend on the time: each entry's period label by
    // period (day, week, month), and each limit's counts ({@link PeriodCounts} or bad starts).
    private final long[][] labels = new long[3][];
    private final PeriodCounts[] periodCounts = new PeriodCounts[3];
    private final int[][] badStarts;

    /**
     * @param limits the rule's {@code campaigns} limits as the message's priority reads them
     * @param own the message's campaign
     */
    DistinctCampaigns(CountedHistory history, List<Limit> limits, String own, ZoneClock zone) {
        this.limits = limits;
        this.zone = zone;
        // As many as the history holds (it is read whole anyway): growing the arrays as the entries
        // came took a tenth of a heavy user's decision.
        int size = Math.max(1, history.size());
        ts = new long[size];
        offsets = new int[size];
        ids = new int[size];
        history.forEachCampaign(Long.MIN_VALUE, Long.MAX_VALUE, this::add);
        int o = idOf(own);
        this.own = o < 0 ? campaigns : o;
        this.count = new int[campaigns + 1];
        this.present = new boolean[campaigns + 1];
        this.seen = new int[campaigns + 1];
        this.badStarts = new int[limits.size()][];
    }

    private void add(long timestamp, int offsetSeconds, String campaign) {
        if (n == ts.length) {
            ts = Arrays.copyOf(ts, n * 2);
            offsets = Arrays.copyOf(offsets, n * 2);
            ids = Arrays.copyOf(ids, n * 2);
        }
        int id = idOf(campaign);
        if (id < 0) {
            id = newId(campaign);
        }
        ts[n] = timestamp;
        offsets[n] = offsetSeconds;
        ids[n++] = id;
    }

    /** The campaign's number, or -1 when no entry read so far has it. */
    private int idOf(String campaign) {
        if (byName != null) {
            Integer id = byName.get(campaign);
            return id == null ? -1 : id;
        }
        // Latest first: a user's entries come in runs of one campaign. A history shares one String
        // per campaign among its entries, so equals mostly answers on identity.
        for (int c = campaigns - 1; c >= 0; c--) {
            if (names[c].equals(campaign)) {
                return c;
            }
        }
        return -1;
    }

    private int newId(String campaign) {
        if (campaigns == names.length) {
            names = Arrays.copyOf(names, campaigns * 2);
        }
        names[campaigns] = campaign;
        if (byName == null && campaigns == SCANNED) {
            byName = new HashMap<>();
            for (int c = 0; c < campaigns; c++) {
                byName.put(names[c], c);
            }
        }
        if (byName != null) {
            byName.put(campaign, campaigns);
        }
        return campaigns++;
    }

    /** The limits a message at {@code at} would break. */
    List<Violation> violations(long at) {
        List<Violation> out = null;
        for (Limit l : limits) {
            int[] most = l.isCalendar() ? inPeriod(l, at) : inIntervals(l, at);
            if (most[1] > l.max()) {
                out = out == null ? new ArrayList<>(2) : out;
                out.add(Violation.of(SCOPE, l, most[0]));
            }
        }
        if (out != null) {
            failing = true;
            failingAt = at;
        }
        return out == null ? List.of() : out;
    }

    private boolean passes(long at) {
        for (Limit l : limits) {
            int[] most = l.isCalendar() ? inPeriod(l, at) : inIntervals(l, at);
            if (most[1] > l.max()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Over the intervals of {@code l}'s window containing {@code at}: the most distinct campaigns
     * any holds, and the most with the message's own.
     */
    private int[] inIntervals(Limit l, long at) {
        long w = l.windowMillis();
        int most = 0;
        int mostWithOwn = 1;
        int first = firstAtOrAfter(at - w + 1);
        int lo = first;
        int hi = lo;
        int size = 0;
        // Starts: the entries in (at - w, at], then at itself; ascending, so both ends move on.
        // The counts follow the map this scan had before issue 46 step for step, so that the
        // sums past Long.MAX_VALUE - w wrap as they did (a campaign taken out before it was
        // added stays present at -1): nowhere near a real timestamp, but the same answers.
        for (int k = lo; k <= n; k++) {
            long s = k < n && ts[k] <= at ? ts[k] : at;
            while (lo < n && ts[lo] < s) {
                int c = ids[lo++];
                if (!present[c]) {
                    present[c] = true;
                    count[c] = -1;
                    size++;
                } else if (--count[c] == 0) {
                    present[c] = false;
                    size--;
                }
            }
            while (hi < n && ts[hi] < s + w) {
                int c = ids[hi++];
                if (!present[c]) {
                    present[c] = true;
                    count[c] = 0;
                    size++;
                }
                count[c]++;
            }
            most = Math.max(most, size);
            mostWithOwn = Math.max(mostWithOwn, size + (present[own] ? 0 : 1));
            if (s == at) {
                break;
            }
        }
        for (int i = first; i < Math.max(lo, hi); i++) {
            present[ids[i]] = false;
            count[ids[i]] = 0;
        }
        return new int[] {most, mostWithOwn};
    }

    /** In {@code l}'s period holding {@code at} in the message's zone: the same two counts. */
    private int[] inPeriod(Limit l, long at) {
        long period = Periods.label(l.calendar(), at, zone.offsetAt(at));
        long[] label = labels(l.calendar());
        int mark = ++stamp;
        int distinct = 0;
        for (int i = 0; i < n; i++) {
            if (label[i] == period && seen[ids[i]] != mark) {
                seen[ids[i]] = mark;
                distinct++;
            }
        }
        return new int[] {distinct, distinct + (seen[own] == mark ? 0 : 1)};
    }

    /**
     * Each entry's label of {@code period} at its own offset (an entry's period is fixed whatever
     * the message's zone, contract.md §6), worked out once.
     */
    private long[] labels(String period) {
        int p = periodIndex(period);
        if (labels[p] == null) {
            long[] out = new long[n];
            for (int i = 0; i < n; i++) {
                out[i] = Periods.label(period, ts[i], offsets[i]);
            }
            labels[p] = out;
        }
        return labels[p];
    }

    /** As {@link Periods#label} tells periods apart: by first letter. */
    private static int periodIndex(String period) {
        return switch (period.charAt(0)) {
            case 'd' -> 0;
            case 'w' -> 1;
            default -> 2;
        };
    }

    private int firstAtOrAfter(long t) {
        int i = Arrays.binarySearch(ts, 0, n, t);
        if (i < 0) {
            return -i - 1;
        }
        while (i > 0 && ts[i - 1] == t) {
            i--;
        }
        return i;
    }

    /**
     * The earliest time at or after {@code from} at which every limit passes; null when none ever
     * does (a limit of 0: the message's own campaign is one too many). Passing can start only at
     * {@code from}, where an entry leaves every interval of a window, or at a period start.
     *
     * <p>{@code from} is checked alone first, unless {@link #violations} found it failing: it
     * usually passes. Otherwise the candidates are tried in ascending order, and since the times
     * only grow, each rolling limit moves its ends on ({@link Rolling}) and each calendar limit
     * looks up its period's count ({@link PeriodCounts}).
     */
    Long earliest(long from) {
        for (Limit l : limits) {
            if (l.max() == 0) {
                return null;
            }
        }
        if (!(failing && failingAt == from) && passes(from)) {
            return from;
        }
        long[] at = new long[n * limits.size() + 16];
        int k = 0;
        at[k++] = from;
        long last = n == 0 ? from : Math.max(from, ts[n - 1]);
        for (Limit l : limits) {
            if (!l.isCalendar()) {
                for (int i = 0; i < n; i++) {
                    if (ts[i] + l.windowMillis() > from) {
                        at = k == at.length ? Arrays.copyOf(at, k * 2) : at;
                        at[k++] = ts[i] + l.windowMillis();
                    }
                }
                continue;
            }
            long horizon = last + l.windowMillis();
            for (long start = from; ; ) {
                long next = Periods.nextStart(l.calendar(), start, zone);
                if (next <= start) {
                    break;
                }
                at = k == at.length ? Arrays.copyOf(at, k * 2) : at;
                at[k++] = next;
                if (next > horizon) {
                    break;
                }
                start = next;
            }
        }
        // Each rolling limit's candidates are ascending already: where there are thousands,
        // Arrays.sort finds those runs and merges them.
        Arrays.sort(at, 0, k);
        Rolling[] rolling = new Rolling[limits.size()];
        for (int j = 0; j < rolling.length; j++) {
            if (!limits.get(j).isCalendar()) {
                rolling[j] = new Rolling(j);
            }
        }
        for (int i = 0; i < k; i++) {
            // `from` failed above; the rest are later (each limit's are after it).
            if (at[i] > from && (i == 0 || at[i] != at[i - 1]) && passesInTurn(at[i], rolling)) {
                return at[i];
            }
        }
        return null;
    }

    /** Whether every limit passes at {@code at}, for times asked in ascending order. */
    private boolean passesInTurn(long at, Rolling[] rolling) {
        for (int j = 0; j < limits.size(); j++) {
            Limit l = limits.get(j);
            if (l.isCalendar()) {
                long period = Periods.label(l.calendar(), at, zone.offsetAt(at));
                if (periodCounts(l.calendar()).withOwn(period) > l.max()) {
                    return false;
                }
            } else if (!rolling[j].passes(at)) {
                return false;
            }
        }
        return true;
    }

    /**
     * One rolling limit (window w, max L) over ascending times t. The intervals containing t start
     * at the entries in (t − w, t] and at t. An interval starting at an entry is the same whatever
     * t: each entry's is worked out once ({@link #badStarts}), and t fails if one in range breaks
     * the limit (prefix sums, two ends moving on). The one starting at t is kept as counts per
     * campaign of the entries in [t, t + w), whose two ends also only move on. So a sweep over m
     * times costs O(n + m).
     */
    private final class Rolling {
        private final Limit limit;
        private final long w;
        private final int max;
        // Prefix sums: bad[k] is how many entries before k start an interval that breaks it.
        private final int[] bad;
        // Starts in (t - w, t]: entries startsFrom .. startsTo - 1.
        private int startsFrom;
        private int startsTo;
        // The interval [t, t + w): entries leave .. enter - 1, counted per campaign.
        private final int[] inside = new int[campaigns + 1];
        private int distinct;
        private int enter;
        private int leave;

        Rolling(int j) {
            limit = limits.get(j);
            w = limit.windowMillis();
            max = limit.max();
            if (badStarts[j] == null) {
                badStarts[j] = badStarts(w, max);
            }
            bad = badStarts[j];
        }

        boolean passes(long at) {
            if (at < Long.MIN_VALUE + w || at > Long.MAX_VALUE - w) {
                // Where at ± w leaves the longs the scan's sums wrap (see inIntervals): ask the
                // scan, for these times only (none is a real timestamp).
                return inIntervals(limit, at)[1] <= max;
            }
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
                if (inside[ids[enter++]]++ == 0) {
                    distinct++;
                }
            }
            while (leave < n && ts[leave] < at) {
                if (--inside[ids[leave++]] == 0) {
                    distinct--;
                }
            }
            return distinct + (inside[own] == 0 ? 1 : 0) <= max;
        }
    }

    /**
     * For each entry k, whether the interval [ts[k], ts[k] + w) breaks a limit of max L (its
     * campaigns with the message's own number more than L), as prefix sums: {@code out[k]} is how
     * many of the entries before k do. One sweep, the interval's two ends moving on.
     */
    private int[] badStarts(long w, int max) {
        int[] inside = new int[campaigns + 1];
        int distinct = 0;
        int[] out = new int[n + 1];
        int enter = 0;
        int leave = 0;
        for (int k = 0; k < n; k++) {
            long s = ts[k];
            // s + w past Long.MAX_VALUE: every later entry is in the interval.
            while (enter < n && (s > Long.MAX_VALUE - w || ts[enter] < s + w)) {
                if (inside[ids[enter++]]++ == 0) {
                    distinct++;
                }
            }
            while (ts[leave] < s) {
                if (--inside[ids[leave++]] == 0) {
                    distinct--;
                }
            }
            int withOwn = distinct + (inside[own] == 0 ? 1 : 0);
            out[k + 1] = out[k] + (withOwn > max ? 1 : 0);
        }
        return out;
    }

    private PeriodCounts periodCounts(String period) {
        int p = periodIndex(period);
        if (periodCounts[p] == null) {
            periodCounts[p] = new PeriodCounts(labels(period));
        }
        return periodCounts[p];
    }

    /**
     * The distinct campaigns of every period some entry falls in, with the message's own: the
     * entries' (label, campaign) pairs sorted and counted once, O(n log n); then a period's count
     * is a binary search.
     */
    private final class PeriodCounts {
        private final long[] periods;
        private final int[] withOwn;

        PeriodCounts(long[] label) {
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
                pairs[i] = (long) Arrays.binarySearch(periods, label[i]) << 32 | ids[i];
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

        /**
         * The distinct campaigns of the entries in period {@code label}, with the message's own.
         */
        int withOwn(long label) {
            int p = Arrays.binarySearch(periods, label);
            return p < 0 ? 1 : withOwn[p];
        }
    }
}
