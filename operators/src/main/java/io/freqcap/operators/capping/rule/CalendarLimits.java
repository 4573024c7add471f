package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.Scope;
import io.freqcap.schema.history.CountedHistory;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * Calendar limits of contract.md §6 for one decision: a message is allowed only if fewer than max
 * counted entries in scope share its period, and {@code retryAfter} is the earliest time passing
 * every limit, where calendar limits can start to pass only at the following period starts in the
 * message's zone. Plain Java.
 *
 * <p>Counts are remembered by scope, period and label for the decision (its history does not change
 * while it is decided): the rules' and the shadow rules' limits of one scope read the history once,
 * and a scope's day and week are counted in one walk (a day lies in its week), each entry's local
 * date worked out once.
 */
public final class CalendarLimits implements CountedHistory.EntryVisitor {
    private static final int REMEMBERED = 16;

    private final CountedHistory history;
    private final ZoneClock zone;

    // Counts worked out so far: scope, period ('d', 'w', 'm'), label, count.
    private Scope[] scopes;
    private char[] periods;
    private long[] labels;
    private int[] counts;
    private int size;

    // The walk under way (see visit).
    private char walking;
    private long day;
    private long week;
    private long month;
    private int dayCount;
    private int weekCount;
    private int monthCount;

    CalendarLimits(CountedHistory history, ZoneClock zone) {
        this.history = history;
        this.zone = zone;
    }

    ZoneClock zone() {
        return zone;
    }

    /**
     * Counted entries in scope in the period of {@code limit} holding {@code t} in the message's
     * zone.
     */
    int count(Scope scope, Limit limit, long t) {
        char period = limit.calendar().charAt(0);
        int offset = zone.offsetAt(t);
        long localDay = Periods.label("day", t, offset);
        long label =
                switch (period) {
                    case 'd' -> localDay;
                    case 'w' -> Periods.weekOfDay(localDay);
                    default -> Periods.label("month", t, offset);
                };
        for (int i = 0; i < size; i++) {
            if (periods[i] == period && labels[i] == label && scopes[i].equals(scope)) {
                return counts[i];
            }
        }
        walking = period == 'm' ? 'm' : 'w';
        day = localDay;
        week = Periods.weekOfDay(localDay);
        month = label;
        dayCount = 0;
        weekCount = 0;
        monthCount = 0;
        // A day lies in its week: the week's span holds every entry of both.
        if (walking == 'm') {
            long[] span = Periods.span("month", month);
            history.forEachIn(scope, span[0], span[1], this);
        } else {
            history.forEachIn(scope, Periods.weekAfter(week), Periods.weekUpTo(week), this);
        }
        if (walking == 'm') {
            remember(scope, 'm', month, monthCount);
            return monthCount;
        }
        remember(scope, 'd', day, dayCount);
        remember(scope, 'w', week, weekCount);
        return period == 'd' ? dayCount : weekCount;
    }

    @Override
    public void visit(long timestamp, int offsetSeconds) {
        if (walking == 'm') {
            if (Periods.label("month", timestamp, offsetSeconds) == month) {
                monthCount++;
            }
            return;
        }
        long d = Periods.label("day", timestamp, offsetSeconds);
        if (d == day) {
            dayCount++;
        }
        if (Periods.weekOfDay(d) == week) {
            weekCount++;
        }
    }

    private void remember(Scope scope, char period, long label, int count) {
        if (scopes == null) {
            // Most decisions remember two to four counts (a scope's day and week): small arrays,
            // grown when a config asks for more. They were a third of a decision's allocations.
            scopes = new Scope[4];
            periods = new char[4];
            labels = new long[4];
            counts = new int[4];
        }
        if (size == REMEMBERED) {
            return; // more than any sane config asks of one message: count again
        }
        if (size == scopes.length) {
            scopes = Arrays.copyOf(scopes, size * 2);
            periods = Arrays.copyOf(periods, size * 2);
            labels = Arrays.copyOf(labels, size * 2);
            counts = Arrays.copyOf(counts, size * 2);
        }
        scopes[size] = scope;
        periods[size] = period;
        labels[size] = label;
        counts[size++] = count;
    }

    /** Whether every calendar limit of {@code scopes} passes at {@code at}. */
    boolean pass(List<ScopeLimits> scopes, long at) {
        for (ScopeLimits s : scopes) {
            for (int i = 0; i < s.size(); i++) {
                Limit l = s.limit(i);
                if (l.isCalendar() && count(s.scope(), l, at) >= l.max()) {
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
    Long retryAfter(
            List<ScopeLimits> scopes,
            long t,
            long[] candidates,
            LongPredicate rollingPass,
            QuietTimes quiet) {
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
                        long next = Periods.nextStart(l.calendar(), start, zone);
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
            return SendTimes.earliest(t, at, n, c -> rollingPass.test(c) && pass(scopes, c), quiet);
        }
        for (int i = 0; i < n; i++) {
            long c = at[i];
            if (c < t || (i > 0 && at[i - 1] == c)) {
                continue; // before the message, or tried already
            }
            if (rollingPass.test(c) && pass(scopes, c)) {
                return c;
            }
        }
        return null;
    }
}
