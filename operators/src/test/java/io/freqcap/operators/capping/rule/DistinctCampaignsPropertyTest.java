package io.freqcap.operators.capping.rule;

import static io.freqcap.schema.Instants.DAY;
import static io.freqcap.schema.Instants.HOUR;
import static io.freqcap.schema.Instants.SECOND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.operators.capping.history.HistoryGrowth;
import io.freqcap.operators.capping.history.LongHistory;
import io.freqcap.operators.capping.rule.Periods.ZoneClock;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.common.Zones;
import io.freqcap.schema.config.Limit;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.UserHistory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * {@link DistinctCampaigns} answers as {@link DistinctCampaignsOracle} (the algorithm before issue
 * 46, the spec) does: the same violations and the same earliest passing time, null alike, on seeded
 * random histories: one campaign to thirty, timestamps repeated and a window ± 1 ms apart, rolling
 * and calendar limits of max 0 to 3 together, entries and messages in zones with DST (Europe/Berlin
 * near its changes, New York, a half-hour and a 45-minute offset), near the turn of a week, a month
 * and a year; histories short and long ({@link LongHistory}); and at the ends of time, where sums
 * of a timestamp and a window leave the longs.
 */
class DistinctCampaignsPropertyTest {
    static final String[] ZONES = {
        "UTC",
        "Europe/Berlin",
        "Europe/Berlin",
        "America/New_York",
        "Asia/Kolkata",
        "Pacific/Chatham"
    };

    /** Berlin's DST changes of 2026 (01:00Z), the turn of a month and of a year. */
    static final long[] BASES = {
        Instant.parse("2026-03-29T01:00:00Z").toEpochMilli(),
        Instant.parse("2026-10-25T01:00:00Z").toEpochMilli(),
        Instant.parse("2026-02-28T22:00:00Z").toEpochMilli(),
        Instant.parse("2025-12-31T23:00:00Z").toEpochMilli()
    };

    /** The time scales of a case: its rolling windows are these or near them. */
    static final long[] SCALES = {10 * SECOND, HOUR, DAY, 7 * DAY};

    static final int[] POOLS = {1, 2, 2, 3, 4, 9, 30};

    static final String[] PERIODS = {"day", "week", "month"};

    /** What one case holds: entries (campaign null for none), limits, the message's campaign. */
    record Case(
            long[] ts,
            int[] offsets,
            String[] campaigns,
            List<Limit> limits,
            String own,
            String zone,
            boolean longHistory) {
        CountedHistory history() {
            int n = ts.length;
            long[] fps = new long[n];
            for (int i = 0; i < n; i++) {
                fps[i] = i + 1;
            }
            UserHistory h =
                    UserHistory.entries(ts.clone(), fps, new int[n], new String[] {"push"})
                            .campaigns(campaigns.clone())
                            .offsets(offsets.clone())
                            .build();
            return longHistory ? LongHistory.of(h, HistoryGrowth.BUCKET_MILLIS) : h;
        }

        @Override
        public String toString() {
            return "limits "
                    + limits
                    + ", own "
                    + own
                    + " in "
                    + zone
                    + ", entries "
                    + Arrays.toString(ts)
                    + " "
                    + Arrays.toString(campaigns)
                    + " offsets "
                    + Arrays.toString(offsets);
        }
    }

    /** How often the answers took each way; the tests check that each way was taken. */
    static final class Seen {
        int queries;
        int violated;
        int calendarViolated;
        int passAtOnce;
        int passLater;
        int never;
    }

    @Test
    void answersAsTheOracleOnRandomHistories() {
        Random rnd = new Random(46);
        Seen seen = new Seen();
        for (int run = 0; run < 4000; run++) {
            long scale = SCALES[rnd.nextInt(SCALES.length)];
            int n = rnd.nextInt(8) == 0 ? 40 + rnd.nextInt(80) : rnd.nextInt(30);
            Case c = randomCase(rnd, n, scale, POOLS[rnd.nextInt(POOLS.length)]);
            compare(c, queries(rnd, c, scale, 12), "run " + run, seen);
        }
        assertTrue(
                seen.violated > 20_000
                        && seen.calendarViolated > 10_000
                        && seen.passLater > 15_000
                        && seen.passAtOnce > 15_000
                        && seen.never > 5_000,
                seen.queries
                        + " queries: "
                        + seen.violated
                        + " violated ("
                        + seen.calendarViolated
                        + " a calendar limit), earliest at once "
                        + seen.passAtOnce
                        + ", later "
                        + seen.passLater
                        + ", never "
                        + seen.never);
    }

    /** Issue 46's shape, smaller: hundreds of entries of two or three campaigns in a window. */
    @Test
    void answersAsTheOracleForHeavyUsersOfFewCampaigns() {
        Random rnd = new Random(4646);
        Seen seen = new Seen();
        for (int run = 0; run < 150; run++) {
            long scale = SCALES[1 + rnd.nextInt(SCALES.length - 1)];
            Case c = randomCase(rnd, 200 + rnd.nextInt(300), scale, 2 + rnd.nextInt(2));
            compare(c, queries(rnd, c, scale, 5), "run " + run, seen);
        }
        assertTrue(seen.passLater > 300, "found later " + seen.passLater);
    }

    /**
     * Timestamps within a window of Long.MAX_VALUE, and of 0 and Long.MIN_VALUE: where the scan's
     * sums wrapped before issue 46 (the contract allows any timestamp ≥ 0 under {@code --max-future
     * off}), the answers are still the same, exceptions included.
     */
    @Test
    void answersAsTheOracleAtTheEndsOfTime() {
        Random rnd = new Random(4600);
        Seen seen = new Seen();
        long[] ends = {Long.MAX_VALUE, 0, Long.MIN_VALUE};
        for (int run = 0; run < 600; run++) {
            long end = ends[run % ends.length];
            long scale = SCALES[rnd.nextInt(SCALES.length)];
            Case c = randomCase(rnd, rnd.nextInt(25), scale, POOLS[rnd.nextInt(POOLS.length)]);
            // Move the entries next to the end, keeping their gaps.
            long[] ts = c.ts().clone();
            long span = ts.length == 0 ? 0 : ts[ts.length - 1] - ts[0];
            long first =
                    end == Long.MAX_VALUE
                            ? end - span - rnd.nextInt(3) * scale
                            : end + rnd.nextInt(3) * scale;
            long shift = ts.length == 0 ? 0 : first - ts[0];
            for (int i = 0; i < ts.length; i++) {
                ts[i] += shift;
            }
            Case moved =
                    new Case(
                            ts,
                            c.offsets(),
                            c.campaigns(),
                            c.limits(),
                            c.own(),
                            c.zone(),
                            c.longHistory());
            List<Long> q = new ArrayList<>();
            for (long t : queries(rnd, moved, scale, 8)) {
                q.add(t);
            }
            for (Limit l : moved.limits()) {
                long w = l.windowMillis();
                long in = end == Long.MAX_VALUE ? -1 : 1;
                q.addAll(List.of(end, end + in * w, end + in * (w - 1), end + in * (w + 1)));
            }
            compare(moved, q.stream().mapToLong(Long::longValue).toArray(), "run " + run, seen);
        }
        assertTrue(seen.violated > 4_000, "violated " + seen.violated);
    }

    static Case randomCase(Random rnd, int n, long scale, int pool) {
        List<Limit> limits = new ArrayList<>();
        int count = 1 + rnd.nextInt(3);
        for (int i = 0; i < count; i++) {
            int max = rnd.nextInt(12) == 0 ? 0 : 1 + rnd.nextInt(3);
            if (rnd.nextInt(5) < 3) {
                long w =
                        switch (rnd.nextInt(4)) {
                            case 0 -> scale;
                            case 1 -> scale / 2;
                            case 2 -> 2 * scale;
                            default -> scale + 1 + rnd.nextInt(1000);
                        };
                limits.add(Limit.rolling(w + "ms", w, max));
            } else {
                limits.add(calendar(PERIODS[rnd.nextInt(PERIODS.length)], max));
            }
        }
        long[] ts = new long[n];
        int[] offsets = new int[n];
        String[] campaigns = new String[n];
        long t = BASES[rnd.nextInt(BASES.length)] - (long) (rnd.nextDouble() * 2 * scale);
        for (int i = 0; i < n; i++) {
            // Repeats, a millisecond, a window and a millisecond either side, or anything.
            t +=
                    switch (rnd.nextInt(8)) {
                        case 0, 1 -> 0;
                        case 2 -> 1;
                        case 3 -> scale - 1;
                        case 4 -> scale;
                        case 5 -> scale + 1;
                        default -> (long) (rnd.nextDouble() * scale / 3);
                    };
            ts[i] = t;
            offsets[i] = Zones.zone(ZONES[rnd.nextInt(ZONES.length)]).offsetAt(t);
            // Mostly the first campaigns; a few entries without one.
            int c = Math.min(pool - 1, rnd.nextInt(pool) * rnd.nextInt(2) + rnd.nextInt(2));
            campaigns[i] = rnd.nextInt(7) == 0 ? null : "c" + c;
        }
        String own = rnd.nextInt(3) == 0 ? "fresh" : "c" + rnd.nextInt(pool);
        return new Case(
                ts,
                offsets,
                campaigns,
                limits,
                own,
                ZONES[rnd.nextInt(ZONES.length)],
                rnd.nextBoolean());
    }

    static Limit calendar(String period, int max) {
        try {
            return Limit.calendar(period, max);
        } catch (MalformedRecordException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /**
     * Times to ask about: at entries, a window after and before them and a millisecond either side,
     * at and next to the message's next period starts, and anywhere around.
     */
    static long[] queries(Random rnd, Case c, long scale, int count) {
        long[] ts = c.ts();
        long[] out = new long[count];
        ZoneClock zone = new ZoneClock(Zones.zone(c.zone()));
        long lo = ts.length == 0 ? BASES[0] : ts[0];
        long hi = ts.length == 0 ? BASES[0] : ts[ts.length - 1];
        for (int i = 0; i < count; i++) {
            long at = ts.length == 0 ? lo : ts[rnd.nextInt(ts.length)];
            Limit l = c.limits().get(rnd.nextInt(c.limits().size()));
            long w = l.windowMillis();
            out[i] =
                    switch (rnd.nextInt(6)) {
                        case 0 -> at;
                        case 1 -> plus(plus(at, w), rnd.nextInt(3) - 1);
                        case 2 -> plus(plus(at, -w), rnd.nextInt(3) - 1);
                        case 3 ->
                                l.isCalendar()
                                        ? plus(
                                                Periods.nextStart(l.calendar(), at, zone),
                                                rnd.nextInt(3) - 1)
                                        : plus(at, rnd.nextInt(3) - 1);
                        default ->
                                plus(
                                        plus(lo, -scale),
                                        (long) (rnd.nextDouble() * (hi - lo + 3 * scale)));
                    };
        }
        return out;
    }

    /**
     * {@code a + b}, held at the ends of the longs: a time past them would be asked from the other
     * end, where neither the rule nor the oracle was ever meant to go (the oracle's period starts
     * from Long.MIN_VALUE up to entries near Long.MAX_VALUE would fill the heap).
     */
    static long plus(long a, long b) {
        long sum = a + b;
        if (((a ^ sum) & (b ^ sum)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return sum;
    }

    static void compare(Case c, long[] queries, String where, Seen seen) {
        CountedHistory h = c.history();
        for (long at : queries) {
            // Each asks a fresh pair, and the same one once more: the new one keeps what it worked
            // out between calls (and what violations found); one more new one is asked only for
            // the earliest time.
            DistinctCampaignsOracle oracle =
                    new DistinctCampaignsOracle(
                            h, c.limits(), c.own(), new ZoneClock(Zones.zone(c.zone())));
            DistinctCampaigns sut =
                    new DistinctCampaigns(
                            h, c.limits(), c.own(), new ZoneClock(Zones.zone(c.zone())));
            String what = where + " at " + at + ": " + c;
            Object violations = outcome(() -> oracle.violations(at));
            assertEquals(violations, outcome(() -> sut.violations(at)), "violations " + what);
            Object earliest = outcome(() -> oracle.earliest(at));
            assertEquals(earliest, outcome(() -> sut.earliest(at)), "earliest " + what);
            DistinctCampaigns unasked =
                    new DistinctCampaigns(
                            h, c.limits(), c.own(), new ZoneClock(Zones.zone(c.zone())));
            assertEquals(earliest, outcome(() -> unasked.earliest(at)), "earliest, alone " + what);
            long again = plus(at, 1);
            assertEquals(
                    outcome(() -> oracle.earliest(again)),
                    outcome(() -> sut.earliest(again)),
                    "earliest once more " + what);
            seen.queries++;
            if (violations instanceof List<?> list && !list.isEmpty()) {
                seen.violated++;
                if (list.stream()
                        .anyMatch(v -> v instanceof Violation.Exceeded e && e.calendar() != null)) {
                    seen.calendarViolated++;
                }
            }
            if (earliest == null) {
                seen.never++;
            } else if (earliest instanceof Long e && e == at) {
                seen.passAtOnce++;
            } else if (earliest instanceof Long) {
                seen.passLater++;
            }
        }
    }

    /** The answer, or the kind of exception asking it threw (the same must be thrown). */
    static Object outcome(Supplier<Object> ask) {
        try {
            return ask.get();
        } catch (RuntimeException e) {
            return e.getClass().getName();
        }
    }
}
