package io.freqcap.operators.capping.rule;

import io.freqcap.operators.capping.rule.Periods.ZoneClock;
import io.freqcap.schema.config.Limit;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.history.CountedHistory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * The {@code campaigns} limits of one rule for one message of a campaign (contract.md §3, §6
 * "Distinct campaigns"): with C(I) the campaigns of the counted entries in an interval or period I
 * plus the message's own, the message passes a rolling limit only if |C(I)| ≤ max for every
 * interval [s, s + w) containing its time, and a calendar limit only if |C(P)| ≤ max for its period
 * P. The fullest interval containing a time starts at it or at an entry before it (sliding a start
 * over empty space loses no entry), so checking those starts is exact. Plain Java.
 *
 * <p>Cost, for n entries with a campaign (the history is read whole, once per decision, and its
 * campaigns numbered, {@link CampaignEntries}): {@link #violations} reads, per rolling limit, the
 * entries within a window of the time, and per calendar limit every entry once: O(n). {@link
 * #earliest} costs as much when the time asked about passes (the common case), and O(n log n) when
 * it must look further: its candidate times are swept once in ascending order, each limit answering
 * from what it worked out for the candidate before (see {@link RollingCampaigns} and {@link
 * PeriodCampaigns}), not by reading the entries again.
 */
final class DistinctCampaigns {
    static final String SCOPE = "campaigns";

    private final List<Limit> limits;
    private final ZoneClock zone;
    private final CampaignEntries e;

    /** The message's campaign's number; {@code e.campaigns} (no entry's) when no entry has it. */
    private final int own;

    // Scratch for one time's scan of a rolling limit (cleared after each) and of a period.
    private final int[] count;
    private final boolean[] present;
    private final int[] seen;
    private int stamp;

    // A time violations found a limit broken at: the rule asks earliest from it next.
    private boolean failing;
    private long failingAt;

    // Worked out when first asked, as they do not depend on the time: each limit's counts (by
    // period, or as bad starts).
    private final PeriodCampaigns[] periodCounts = new PeriodCampaigns[3];
    private final int[][] badStarts;

    /**
     * @param limits the rule's {@code campaigns} limits as the message's priority reads them
     * @param own the message's campaign
     */
    DistinctCampaigns(CountedHistory history, List<Limit> limits, String own, ZoneClock zone) {
        this.limits = limits;
        this.zone = zone;
        this.e = new CampaignEntries(history);
        this.own = e.numberOf(own);
        this.count = new int[e.campaigns + 1];
        this.present = new boolean[e.campaigns + 1];
        this.seen = new int[e.campaigns + 1];
        this.badStarts = new int[limits.size()][];
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
        long[] ts = e.ts;
        int[] ids = e.ids;
        int n = e.n;
        int most = 0;
        int mostWithOwn = 1;
        int first = e.firstAtOrAfter(at - w + 1);
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
        long[] label = PeriodCampaigns.labels(e, l.calendar());
        int[] ids = e.ids;
        int mark = ++stamp;
        int distinct = 0;
        for (int i = 0; i < e.n; i++) {
            if (label[i] == period && seen[ids[i]] != mark) {
                seen[ids[i]] = mark;
                distinct++;
            }
        }
        return new int[] {distinct, distinct + (seen[own] == mark ? 0 : 1)};
    }

    /**
     * The earliest time at or after {@code from} at which every limit passes; null when none ever
     * does (a limit of 0: the message's own campaign is one too many). Passing can start only at
     * {@code from}, where an entry leaves every interval of a window, or at a period start.
     *
     * <p>{@code from} is checked alone first, unless {@link #violations} found it failing: it
     * usually passes. Otherwise the candidates are tried in ascending order, and since the times
     * only grow, each rolling limit moves its ends on ({@link RollingCampaigns}) and each calendar
     * limit looks up its period's count ({@link PeriodCampaigns}).
     */
    Long earliest(long from) {
        if (blocks()) {
            return null;
        }
        if (!(failing && failingAt == from) && passes(from)) {
            return from;
        }
        Sweep sweep = sweep(from);
        long[] at = sweep.at();
        for (int i = 0; i < sweep.n(); i++) {
            // `from` failed above; the rest are later (each limit's are after it).
            if (at[i] > from && (i == 0 || at[i] != at[i - 1]) && sweep.passes().test(at[i])) {
                return at[i];
            }
        }
        return null;
    }

    /** Whether a limit of 0 blocks every time (the message's own campaign is one too many). */
    boolean blocks() {
        for (Limit l : limits) {
            if (l.max() == 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * The times at or after a time at which the limits may start to pass, and a test of whether
     * they all pass at a time, to be asked in ascending order of times.
     *
     * @param at ascending in {@code [0, n)}, possibly repeated
     */
    record Sweep(long[] at, int n, LongPredicate passes) {}

    /**
     * The candidates from {@code from} on ({@code from} itself, an entry plus a rolling window
     * after it, the period starts up to the last entry plus a period), and the test in turn.
     * Building it costs O(n log n) once; the test answers a sweep of m ascending times in O(n + m)
     * together.
     */
    Sweep sweep(long from) {
        long[] ts = e.ts;
        int n = e.n;
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
        RollingCampaigns[] rolling = new RollingCampaigns[limits.size()];
        for (int j = 0; j < rolling.length; j++) {
            Limit l = limits.get(j);
            if (!l.isCalendar()) {
                if (badStarts[j] == null) {
                    badStarts[j] = RollingCampaigns.badStarts(e, own, l.windowMillis(), l.max());
                }
                rolling[j] =
                        new RollingCampaigns(
                                e, own, l, badStarts[j], t -> inIntervals(l, t)[1] <= l.max());
            }
        }
        return new Sweep(at, k, time -> passesInTurn(time, rolling));
    }

    /** Whether every limit passes at {@code at}, for times asked in ascending order. */
    private boolean passesInTurn(long at, RollingCampaigns[] rolling) {
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

    private PeriodCampaigns periodCounts(String period) {
        int p = PeriodCampaigns.periodIndex(period);
        if (periodCounts[p] == null) {
            periodCounts[p] = new PeriodCampaigns(e, PeriodCampaigns.labels(e, period), own);
        }
        return periodCounts[p];
    }
}
