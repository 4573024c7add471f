package io.freqcap.operators.capping;

import io.freqcap.schema.CountedHistory;
import io.freqcap.schema.Limit;
import io.freqcap.schema.Scope;
import java.util.List;
import java.util.TreeSet;
import java.util.function.LongPredicate;

/**
 * Calendar limits of contract.md §6: a message is allowed only if fewer than max counted entries in
 * scope share its period, and {@code retryAfter} is the earliest time passing every limit, where
 * calendar limits can start to pass only at the following period starts in the message's zone.
 * Plain Java.
 */
final class CalendarLimits {
    private CalendarLimits() {}

    /**
     * Counted entries in scope in the period of {@code limit} holding {@code t} in {@code zone}.
     */
    static int count(CountedHistory history, Scope scope, Limit limit, long t, ZoneClock zone) {
        String period = limit.calendar();
        long label = Periods.labelAt(period, t, zone);
        long[] span = Periods.span(period, label);
        int[] n = {0};
        history.forEachIn(
                scope,
                span[0],
                span[1],
                (ts, offset) -> {
                    if (Periods.label(period, ts, offset) == label) {
                        n[0]++;
                    }
                });
        return n[0];
    }

    /** Whether every calendar limit of {@code scopes} passes at {@code at}. */
    static boolean pass(CountedHistory history, List<ScopeLimits> scopes, long at, ZoneClock zone) {
        for (ScopeLimits s : scopes) {
            for (Limit l : s.limits()) {
                if (l.isCalendar() && count(history, s.scope(), l, at, zone) >= l.max()) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * The earliest time at or after {@code t} among {@code candidates} (rolling limits' own) and
     * the following period starts of every calendar limit, at which the rolling limits pass ({@code
     * rollingPass}) and so do the calendar ones; null when none does (a limit of 0).
     */
    static Long retryAfter(
            CountedHistory history,
            List<ScopeLimits> scopes,
            long t,
            ZoneClock zone,
            long[] candidates,
            LongPredicate rollingPass) {
        TreeSet<Long> at = new TreeSet<>();
        at.add(t);
        long last = t;
        for (long c : candidates) {
            at.add(c);
            last = Math.max(last, c);
        }
        if (!history.isEmpty()) {
            last = Math.max(last, history.latest());
        }
        for (ScopeLimits s : scopes) {
            for (Limit l : s.limits()) {
                if (l.max() == 0) {
                    return null;
                }
                if (l.isCalendar()) {
                    // Past the latest entry plus the period's span in any two zones (what the
                    // limit counts as a window), its periods hold nothing: one start past it is
                    // enough.
                    long horizon =
                            last > Long.MAX_VALUE - l.windowMillis()
                                    ? Long.MAX_VALUE
                                    : last + l.windowMillis();
                    long start = t;
                    while (true) {
                        long next = Periods.nextStart(l.calendar(), start, zone);
                        if (next <= start) {
                            break; // the end of time
                        }
                        at.add(next);
                        if (next > horizon) {
                            break;
                        }
                        start = next;
                    }
                }
            }
        }
        for (long c : at.tailSet(t, true)) {
            if (rollingPass.test(c) && pass(history, scopes, c, zone)) {
                return c;
            }
        }
        return null;
    }
}
