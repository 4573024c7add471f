package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.Scope;
import io.freqcap.schema.history.CountedHistory;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * Calendar limits of contract.md §6 for one decision: a message is allowed only if fewer than max
 * counted entries in scope share its period ({@link CalendarCounts}), and {@code retryAfter} is the
 * earliest time passing every limit, where calendar limits can start to pass only at the following
 * period starts in the message's zone. Plain Java.
 *
 * @param counts the history's counts by period in the message's zone
 * @param scopes the message's scopes, with their limits
 */
record CalendarLimits(CalendarCounts counts, List<ScopeLimits> scopes) {

    /** Counted entries in scope in the period of {@code limit} holding {@code t}. */
    int count(Scope scope, Limit limit, long t) {
        return counts.count(scope, limit, t);
    }

    /** Whether every calendar limit of {@code scopes} passes at {@code at}. */
    boolean pass(long at) {
        for (ScopeLimits s : scopes) {
            for (int i = 0; i < s.size(); i++) {
                Limit l = s.limit(i);
                if (l.isCalendar() && counts.count(s.scope(), l, at) >= l.max()) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * The earliest time at or after {@code t} among {@code candidates} (rolling limits' own) and
     * the following period starts of every calendar limit, at which the rolling limits pass ({@code
     * rollingPass}) and so do the calendar ones, outside {@code quiet} hours when there are some;
     * null when none does (a limit of 0).
     */
    Long retryAfter(long t, long[] candidates, LongPredicate rollingPass, QuietTimes quiet) {
        CountedHistory history = counts.history();
        long[] at = new long[candidates.length + 8];
        int n = 0;
        at[n++] = t;
        long last = t;
        for (long c : candidates) {
            at[n++] = c;
            last = Math.max(last, c);
        }
        if (!history.isEmpty()) {
            last = Math.max(last, history.latest());
        }
        for (ScopeLimits s : scopes) {
            for (int i = 0; i < s.size(); i++) {
                Limit l = s.limit(i);
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
                        long next = Periods.nextStart(l.calendar(), start, counts.zone());
                        if (next <= start) {
                            break; // the end of time
                        }
                        if (n == at.length) {
                            at = Arrays.copyOf(at, n * 2);
                        }
                        at[n++] = next;
                        if (next > horizon) {
                            break;
                        }
                        start = next;
                    }
                }
            }
        }
        Arrays.sort(at, 0, n);
        if (quiet != null) {
            return QuietTimes.earliest(t, at, n, c -> rollingPass.test(c) && pass(c), quiet);
        }
        for (int i = 0; i < n; i++) {
            long c = at[i];
            if (c < t || (i > 0 && at[i - 1] == c)) {
                continue; // before the message, or tried already
            }
            if (rollingPass.test(c) && pass(c)) {
                return c;
            }
        }
        return null;
    }
}
