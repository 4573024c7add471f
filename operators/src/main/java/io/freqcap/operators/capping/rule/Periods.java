package io.freqcap.operators.capping.rule;

import io.freqcap.schema.common.Zones;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.temporal.TemporalAdjusters;

/**
 * Calendar periods of contract.md §6: a local date, an ISO week (Monday to Monday) or a month.
 * Periods are labels: an entry belongs to the period its timestamp falls in at its own zone's
 * offset, whatever zone a later message is in. Plain Java over {@code java.time}.
 */
public final class Periods {
    private Periods() {}

    private static final long DAY_MILLIS = 86_400_000L;

    /** Entries of one label lie within this much of the label's dates in UTC (UTC±18:00). */
    private static final long ZONE_SPREAD_MILLIS = 18 * 3_600_000L;

    /** The label of the period of an entry at {@code ts} whose zone was {@code offsetSeconds}. */
    static long label(String period, long ts, int offsetSeconds) {
        long epochDay = Math.floorDiv(Math.floorDiv(ts, 1000) + offsetSeconds, 86_400);
        // By first letter: a limit's period is one of the three (Limit.calendar checks), and this
        // runs for every entry a calendar limit reads.
        return switch (period.charAt(0)) {
            case 'd' -> epochDay;
            case 'w' -> weekOfDay(epochDay);
            default -> {
                LocalDate d = LocalDate.ofEpochDay(epochDay);
                yield d.getYear() * 12L + d.getMonthValue() - 1;
            }
        };
    }

    /** The label of the ISO week holding local date {@code epochDay}. */
    static long weekOfDay(long epochDay) {
        return Math.floorDiv(epochDay - 4, 7); // 1970-01-05 was a Monday
    }

    /**
     * The timestamps entries of {@code label} can have, whatever their zone: {@code (after, upTo]},
     * as {@code {after, upTo}}.
     */
    static long[] span(String period, long label) {
        long firstDay;
        long lastDay;
        switch (period) {
            case "day" -> {
                firstDay = label;
                lastDay = label;
            }
            case "week" -> {
                firstDay = label * 7 + 4;
                lastDay = firstDay + 6;
            }
            default -> {
                LocalDate first =
                        LocalDate.of(
                                (int) Math.floorDiv(label, 12),
                                (int) Math.floorMod(label, 12) + 1,
                                1);
                firstDay = first.toEpochDay();
                lastDay = first.plusMonths(1).toEpochDay() - 1;
            }
        }
        return new long[] {
            millis(firstDay, -ZONE_SPREAD_MILLIS - 1), millis(lastDay + 1, ZONE_SPREAD_MILLIS)
        };
    }

    /** {@code span("week", week)[0]} without the array (every calendar decision asks it). */
    static long weekAfter(long week) {
        return millis(week * 7 + 4, -ZONE_SPREAD_MILLIS - 1);
    }

    /** {@code span("week", week)[1]} without the array. */
    static long weekUpTo(long week) {
        return millis(week * 7 + 11, ZONE_SPREAD_MILLIS);
    }

    /** The start of an epoch day plus {@code shift}, saturated at the ends of time. */
    private static long millis(long epochDay, long shift) {
        try {
            return Math.addExact(Math.multiplyExact(epochDay, DAY_MILLIS), shift);
        } catch (ArithmeticException e) {
            return epochDay > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
        }
    }

    /** A period start worked out before: the one after local date {@code day} in {@code zone}. */
    private record Next(ZoneId zone, String period, long day, long start) {}

    /**
     * Recent answers of {@link #nextStart}, which depend only on the zone, the period and the local
     * date: a rejected message asks for the next days, weeks and months of its zone, and so do the
     * other users' rejected messages of that day. Direct-mapped, entries immutable and replaced
     * whole, shared by every task.
     */
    private static final Next[] NEXT = new Next[1024];

    /**
     * The first instant of the period after the one holding {@code t} in {@code zone}: its first
     * date's start of day (where a DST gap skips local midnight, the first instant after the gap).
     */
    static long nextStart(String period, long t, ZoneClock zone) {
        // The local date, as LocalDate.ofInstant works it out.
        long day = Math.floorDiv(Math.floorDiv(t, 1000) + zone.offsetAt(t), 86_400);
        ZoneId id = zone.zone();
        int slot =
                (31 * (31 * id.hashCode() + period.hashCode()) + Long.hashCode(day))
                        & (NEXT.length - 1);
        Next known = NEXT[slot];
        if (known != null
                && known.day == day
                && known.zone.equals(id)
                && known.period.equals(period)) {
            return known.start;
        }
        long start = nextStart(period, t, id);
        NEXT[slot] = new Next(id, period, day, start);
        return start;
    }

    private static long nextStart(String period, long t, ZoneId zone) {
        LocalDate d = LocalDate.ofInstant(Instant.ofEpochMilli(t), zone);
        LocalDate next =
                switch (period) {
                    case "day" -> d.plusDays(1);
                    case "week" -> d.with(TemporalAdjusters.next(DayOfWeek.MONDAY));
                    default -> d.withDayOfMonth(1).plusMonths(1);
                };
        try {
            return next.atStartOfDay(zone).toInstant().toEpochMilli();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE; // past the last millisecond a timestamp can name
        }
    }

    /**
     * A message's zone for one decision: its offsets (remembered by {@link Zones.Zone} over the
     * span between two transitions) and its rules, for the period starts {@code retryAfter} needs.
     */
    public static final class ZoneClock {
        private final Zones.Zone zone;

        ZoneClock(Zones.Zone zone) {
            this.zone = zone;
        }

        ZoneId zone() {
            return zone.id();
        }

        /** Seconds east of UTC at {@code t} in this zone. */
        int offsetAt(long t) {
            return zone.offsetAt(t);
        }
    }
}
