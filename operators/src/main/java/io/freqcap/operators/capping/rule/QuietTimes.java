package io.freqcap.operators.capping.rule;

import io.freqcap.operators.capping.rule.Periods.ZoneClock;
import io.freqcap.schema.config.QuietHours;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.preference.UserPreferences;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * The times a message may not be sent at, in one message's zone: its rule's quiet hours
 * (contract.md §3) and its user's pause (§10, {@code pausedUntil}). Whether an instant is closed,
 * and the first instant at or after one that is not. Plain Java.
 *
 * <p>An instant is in quiet hours when its local wall-clock time lies in them. Quiet time ends
 * where the wall clock reaches {@code to} (both times, where DST repeats it) or jumps out of the
 * quiet hours at a DST transition, so those instants are the only ones worth trying. A pause closes
 * every instant before its end; after it only quiet hours do.
 *
 * <p>A pause from {@link #FOR_GOOD} (the year 10000) on never ends (contract.md §10), and times
 * past the last instant an epoch-ms value can name are never open: {@link #nextOpen} says {@link
 * #NEVER} for both, so no value of a pause or a timestamp can make the arithmetic overflow.
 */
final class QuietTimes {
    private static final long DAY_MILLIS = 86_400_000L;

    /** A pause ending at or after this instant (0:00 UTC on 1 January 10000) is for good. */
    static final long FOR_GOOD = UserPreferences.PAUSED_FOR_GOOD;

    /** What {@link #nextOpen} gives when no instant after is open. */
    static final long NEVER = Long.MAX_VALUE;

    private final QuietHours hours;
    private final ZoneClock zone;
    private final long pausedUntil;

    /**
     * @param hours the rule's quiet hours for the message's channel, or null
     * @param pausedUntil the end of the user's pause; {@link Long#MIN_VALUE} for none
     */
    QuietTimes(QuietHours hours, ZoneClock zone, long pausedUntil) {
        this.hours = hours;
        this.zone = zone;
        this.pausedUntil = pausedUntil;
    }

    /** Whether {@code t} is closed, by quiet hours or the pause. */
    boolean isQuiet(long t) {
        return paused(t) || inHours(t);
    }

    /** What closes {@code t}: the quiet hours', then the pause's violation. */
    List<Violation> violationsAt(long t) {
        List<Violation> out = new ArrayList<>(2);
        if (inHours(t)) {
            out.add(Violation.quietHours(hours.from(), hours.to()));
        }
        if (paused(t)) {
            out.add(Violation.paused(pausedUntil));
        }
        return out;
    }

    private boolean paused(long t) {
        return t < pausedUntil || pausedUntil >= FOR_GOOD;
    }

    private boolean inHours(long t) {
        if (hours == null) {
            return false;
        }
        // Each term reduced to a day first: near Long.MAX_VALUE the sum would overflow.
        long local = Math.floorMod(t, DAY_MILLIS) + zone.offsetAt(t) * 1000L;
        return hours.isQuiet(Math.floorMod(local, DAY_MILLIS));
    }

    /**
     * The first instant at or after {@code t} that is not closed; {@link #NEVER} when none is (a
     * pause for good, or quiet hours whose end lies past the last instant a timestamp can name).
     */
    long nextOpen(long t) {
        if (pausedUntil >= FOR_GOOD) {
            return NEVER;
        }
        t = Math.max(t, pausedUntil);
        if (!inHours(t)) {
            return t;
        }
        ZoneRules rules = zone.zone().getRules();
        LocalDate day = LocalDate.ofInstant(Instant.ofEpochMilli(t), zone.zone());
        LocalTime to = LocalTime.of(hours.toMinute() / 60, hours.toMinute() % 60);
        long[] tries = new long[16];
        int n = 0;
        // Quiet hours span less than a day: an end lies within the next two local dates.
        for (int d = 0; d <= 2; d++) {
            LocalDateTime end = LocalDateTime.of(day.plusDays(d), to);
            // None in a gap: the transition that skips it, tried below, ends quiet time then.
            List<ZoneOffset> offsets = rules.getValidOffsets(end);
            for (ZoneOffset o : offsets) {
                long seconds = end.toEpochSecond(o);
                if (seconds < Long.MAX_VALUE / 1000) {
                    tries[n++] = seconds * 1000L;
                }
            }
        }
        Instant from = Instant.ofEpochMilli(t);
        for (ZoneOffsetTransition tr = rules.nextTransition(from);
                tr != null
                        && n < tries.length
                        && tr.toEpochSecond() < Long.MAX_VALUE / 1000
                        && tr.toEpochSecond() * 1000L - t < 3 * DAY_MILLIS;
                tr = rules.nextTransition(tr.getInstant())) {
            tries[n++] = tr.toEpochSecond() * 1000L;
        }
        Arrays.sort(tries, 0, n);
        for (int i = 0; i < n; i++) {
            if (tries[i] > t && !inHours(tries[i])) {
                return tries[i];
            }
        }
        // Only past the last representable instant: quiet hours span less than a day.
        return NEVER;
    }

    /**
     * The earliest instant at or after a message's timestamp outside quiet hours at which it passes
     * every limit (contract.md §6): its send time, or its {@code retryAfter}. Plain Java.
     *
     * <p>The instants at which the limits pass form intervals that start at the candidates the
     * limits give (t, an entry plus its window, a period start); the instants outside quiet hours
     * form intervals that start where quiet time ends. So the earliest instant in both is t, a
     * candidate that is not quiet, or the end of quiet time after a candidate: trying those in
     * order finds it.
     *
     * @param candidates ascending in {@code [0, n)}: every instant after t at which the limits may
     *     start to pass
     * @param passes whether the limits pass at an instant at or after t, asked in ascending order
     * @param quiet the quiet hours, or null for none
     * @return null when no instant passes (a limit of 0, a pause for good)
     */
    static Long earliest(long t, long[] candidates, int n, LongPredicate passes, QuietTimes quiet) {
        int next = 0;
        long at = t;
        while (true) {
            at = quiet == null ? at : quiet.nextOpen(at);
            if (at == QuietTimes.NEVER) {
                return null;
            }
            if (passes.test(at)) {
                return at;
            }
            while (next < n && candidates[next] <= at) {
                next++;
            }
            if (next == n) {
                return null; // past every candidate the limits no longer change
            }
            at = candidates[next];
        }
    }
}
