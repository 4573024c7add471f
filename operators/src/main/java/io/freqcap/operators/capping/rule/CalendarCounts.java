package io.freqcap.operators.capping.rule;

import io.freqcap.operators.capping.rule.Periods.ZoneClock;
import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.Scope;
import io.freqcap.schema.history.CountedHistory;
import java.util.Arrays;

/**
 * What calendar limits (contract.md §6) read of one user's history for one decision: how many
 * counted entries in scope share a period in the message's zone. Plain Java.
 *
 * <p>Counts are remembered by scope, period and label for the decision (its history does not change
 * while it is decided): the rules' and the shadow rules' limits of one scope read the history once,
 * and a scope's day and week are counted in one walk (a day lies in its week), each entry's local
 * date worked out once.
 */
final class CalendarCounts implements CountedHistory.EntryVisitor {
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

    CalendarCounts(CountedHistory history, ZoneClock zone) {
        this.history = history;
        this.zone = zone;
    }

    ZoneClock zone() {
        return zone;
    }

    CountedHistory history() {
        return history;
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
}
