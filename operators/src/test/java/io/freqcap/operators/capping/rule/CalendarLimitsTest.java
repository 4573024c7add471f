package io.freqcap.operators.capping.rule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.decision.Violations;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.OutboundMessage;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.TemporalAdjusters;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** Calendar limits (contract.md §3, §6): periods in the user's zone, labels fixed when counted. */
class CalendarLimitsTest {
    static final String SINGAPORE_CONFIG =
            "{\"version\":8,\"timezone\":\"Asia/Singapore\",\"rules\":["
                    + "{\"segment\":\"new\",\"limits\":[{\"calendar\":\"day\",\"max\":2},"
                    + "{\"window\":\"7d\",\"max\":5}],"
                    + "\"categories\":{\"promo\":[{\"calendar\":\"week\",\"max\":2}]},"
                    + "\"campaign\":[{\"calendar\":\"day\",\"max\":1}]},"
                    + "{\"segment\":\"*\",\"limits\":[{\"calendar\":\"day\",\"max\":1},"
                    + "{\"calendar\":\"month\",\"max\":12}]}],"
                    + "\"exempt\":[\"transactional\"]}";

    static OutboundMessage message(String id, long t, String zone, String campaign) {
        return new OutboundMessage(id, 42, "push", "marketing", t, zone, campaign, 0);
    }

    static UserHistory count(UserHistory h, OutboundMessage m, LimitConfig config, String seg) {
        RuleStep.Result v = RuleStep.decide(h, m, config, seg);
        assertEquals(Decision.ALLOWED, v.decision(), m.toString());
        return v.history();
    }

    @Test
    void theContractsExample() throws Exception {
        LimitConfig config = LimitConfig.parse(SINGAPORE_CONFIG);
        long noonUtc = 1_763_812_800_000L; // 20:00 in Singapore, 22 November 2025
        UserHistory h = UserHistory.EMPTY;
        h =
                count(
                        h,
                        message("m-1", noonUtc - 8 * 3_600_000L, "Asia/Singapore", null),
                        config,
                        "new");
        h = count(h, message("m-2", noonUtc - 4 * 3_600_000L, null, "spring-sale"), config, "new");
        RuleStep.Result v =
                RuleStep.decide(
                        h,
                        message("m-000231", noonUtc, "Asia/Singapore", "spring-sale"),
                        config,
                        "new");
        assertEquals(Decision.REJECTED, v.decision());
        assertEquals(
                List.of(
                        Violations.calendar("all", "day", 2, 2),
                        Violations.calendar("campaign:spring-sale", "day", 1, 1)),
                v.violations());
        assertEquals(1_763_827_200_000L, v.retryAfter(), "midnight in Singapore");
    }

    @Test
    void aDayIsTheLocalDateAcrossDaylightSavingTime() throws Exception {
        LimitConfig config =
                LimitConfig.parse(
                        "{\"version\":1,\"timezone\":\"America/New_York\",\"rules\":[{\"segment\":\"*\","
                                + "\"limits\":[{\"calendar\":\"day\",\"max\":1}]}]}");
        ZoneId ny = ZoneId.of("America/New_York");
        long early = ZonedDateTime.of(2026, 3, 8, 0, 10, 0, 0, ny).toInstant().toEpochMilli();
        long late = ZonedDateTime.of(2026, 3, 8, 23, 50, 0, 0, ny).toInstant().toEpochMilli();
        UserHistory h = count(UserHistory.EMPTY, message("a", early, null, null), config, "*");
        RuleStep.Result v = RuleStep.decide(h, message("b", late, null, null), config, "*");
        assertEquals(Decision.REJECTED, v.decision(), "one local date, though 23 hours long");
        assertEquals(
                ZonedDateTime.of(2026, 3, 9, 0, 0, 0, 0, ny).toInstant().toEpochMilli(),
                v.retryAfter());
    }

    @Test
    void aCountedEntryKeepsItsOwnDate() throws Exception {
        LimitConfig config =
                LimitConfig.parse(
                        "{\"version\":1,\"rules\":[{\"segment\":\"*\","
                                + "\"limits\":[{\"calendar\":\"day\",\"max\":1}]}]}");
        // 23:30 on 1 Dec in Tokyo is 14:30 UTC; in Los Angeles it is 06:30 on 1 Dec.
        long t =
                ZonedDateTime.of(2026, 12, 1, 23, 30, 0, 0, ZoneId.of("Asia/Tokyo"))
                        .toInstant()
                        .toEpochMilli();
        UserHistory h = count(UserHistory.EMPTY, message("a", t, "Asia/Tokyo", null), config, "*");
        long laterSameLabel = t + 3_600_000L; // 07:30 on 1 Dec in Los Angeles
        assertEquals(
                Decision.REJECTED,
                RuleStep.decide(
                                h,
                                message("b", laterSameLabel, "America/Los_Angeles", null),
                                config,
                                "*")
                        .decision());
        long nextTokyoDay = t + 3_600_000L; // 00:30 on 2 Dec in Tokyo
        assertEquals(
                Decision.ALLOWED,
                RuleStep.decide(h, message("c", nextTokyoDay, "Asia/Tokyo", null), config, "*")
                        .decision());
    }

    // ---- against a brute-force oracle ----

    static final long GRID = 15 * 60_000L; // every zone below has whole quarter-hour offsets
    static final String[] ZONES = {
        null,
        "UTC",
        "America/New_York",
        "Europe/London",
        "Asia/Kolkata",
        "Asia/Kathmandu",
        "Australia/Lord_Howe",
        "Pacific/Kiritimati",
        "Pacific/Pago_Pago",
        "America/Havana"
    };
    static final String[] PERIODS = {"day", "day", "week", "month"};

    @Test
    void matchesBruteForceOracleWithRandomZonesAcrossDstChanges() throws Exception {
        Random rnd = new Random(77);
        long base = Instant.parse("2026-02-20T00:00:00Z").toEpochMilli(); // DST changes in March
        int rejected = 0;
        int calendarViolations = 0;
        for (int run = 0; run < 300; run++) {
            String configZone = ZONES[1 + rnd.nextInt(ZONES.length - 1)];
            LimitConfig config = LimitConfig.parse(randomConfig(rnd, configZone));
            List<Entry> counted = new ArrayList<>();
            UserHistory h = UserHistory.EMPTY;
            long clock = base + rnd.nextInt(40 * 96) * GRID;
            for (int i = 0; i < 25; i++) {
                clock += rnd.nextInt(40) * GRID;
                long t = clock - (rnd.nextInt(5) == 0 ? rnd.nextInt(96) * GRID : 0);
                String zone = ZONES[rnd.nextInt(ZONES.length)];
                String campaign = rnd.nextBoolean() ? null : "c" + rnd.nextInt(2);
                String category = rnd.nextInt(3) == 0 ? "promo" : "marketing";
                OutboundMessage m =
                        new OutboundMessage("m" + i, 1, "push", category, t, zone, campaign, 0);
                RuleStep.Result v = RuleStep.decide(h, m, config, "*");
                Oracle.Result expected = Oracle.decide(config, counted, m);
                String where = "run " + run + " message " + i + " " + m + " in " + configZone;
                assertEquals(expected.decision(), v.decision(), where);
                if (v.decision() == Decision.REJECTED) {
                    assertEquals(expected.violations(), v.violations(), where);
                    assertEquals(expected.retryAfter(), v.retryAfter(), where);
                    rejected++;
                    calendarViolations +=
                            v.violations().stream()
                                    .filter(
                                            x ->
                                                    x instanceof Violation.Exceeded e
                                                            && e.calendar() != null)
                                    .count();
                }
                if (v.decision() == Decision.ALLOWED) {
                    counted.add(new Entry(t, Oracle.zone(m, config), category, campaign));
                }
                h = v.history();
            }
        }
        assertTrue(
                rejected > 2000 && calendarViolations > 1500, rejected + " " + calendarViolations);
    }

    static String randomConfig(Random rnd, String zone) {
        StringBuilder limits = new StringBuilder();
        int n = 1 + rnd.nextInt(3);
        for (int i = 0; i < n; i++) {
            limits.append(i > 0 ? "," : "");
            if (rnd.nextInt(3) == 0) {
                limits.append("{\"window\":\"").append(1 + rnd.nextInt(12)).append("h\"");
            } else {
                limits.append("{\"calendar\":\"")
                        .append(PERIODS[rnd.nextInt(PERIODS.length)])
                        .append('"');
            }
            limits.append(",\"max\":").append(1 + rnd.nextInt(4)).append('}');
        }
        String rule = "{\"segment\":\"*\",\"limits\":[" + limits + "]";
        if (rnd.nextBoolean()) {
            rule +=
                    ",\"campaign\":[{\"calendar\":\""
                            + PERIODS[rnd.nextInt(PERIODS.length)]
                            + "\",\"max\":1}]";
        }
        if (rnd.nextBoolean()) {
            rule += ",\"categories\":{\"promo\":[{\"calendar\":\"week\",\"max\":2}]}";
        }
        return "{\"version\":1,\"timezone\":\"" + zone + "\",\"rules\":[" + rule + "}]}";
    }

    /** A counted message, with its day, week and month where it was counted. */
    record Entry(long t, ZoneId zone, String category, String campaign, List<Object> periods) {
        Entry(long t, ZoneId zone, String category, String campaign) {
            this(
                    t,
                    zone,
                    category,
                    campaign,
                    List.of(
                            Oracle.period("day", t, zone),
                            Oracle.period("week", t, zone),
                            Oracle.period("month", t, zone)));
        }

        Object period(String p) {
            return periods.get(p.equals("day") ? 0 : p.equals("week") ? 1 : 2);
        }
    }

    /** contract.md §6 read literally, with java.time's dates, weeks and months. */
    static final class Oracle {
        record Result(Decision decision, List<Violation> violations, Long retryAfter) {}

        static ZoneId zone(OutboundMessage m, LimitConfig config) {
            return ZoneId.of(m.timezone() != null ? m.timezone() : config.timezone());
        }

        static Object period(String p, long t, ZoneId zone) {
            LocalDate d = LocalDate.ofInstant(Instant.ofEpochMilli(t), zone);
            return switch (p) {
                case "day" -> d;
                case "week" -> d.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
                default -> YearMonth.from(d);
            };
        }

        static Result decide(LimitConfig config, List<Entry> counted, OutboundMessage m) {
            long latest = counted.stream().mapToLong(Entry::t).max().orElse(Long.MIN_VALUE);
            if (!counted.isEmpty() && m.timestamp() < latest - config.longestWindowMillis()) {
                return new Result(Decision.STALE, List.of(), null);
            }
            ZoneId zone = zone(m, config);
            List<Violation> v = violations(config, counted, m, m.timestamp(), zone);
            if (v.isEmpty()) {
                return new Result(Decision.ALLOWED, List.of(), null);
            }
            for (long at = m.timestamp(); ; at += GRID) {
                if (passes(config, counted, m, at, zone)) {
                    return new Result(Decision.REJECTED, v, at);
                }
            }
        }

        /** Whether nothing is violated at {@code at} (stops at the first violation). */
        static boolean passes(
                LimitConfig config, List<Entry> counted, OutboundMessage m, long at, ZoneId zone) {
            return violations(config, counted, m, at, zone).isEmpty();
        }

        static List<Violation> violations(
                LimitConfig config, List<Entry> counted, OutboundMessage m, long t, ZoneId zone) {
            Rule rule = config.ruleFor("*");
            List<Violation> out = new ArrayList<>();
            check(out, "all", rule.caps().all(), counted, e -> true, t, zone);
            check(
                    out,
                    "category:" + m.category(),
                    rule.categoryLimits(m.category()),
                    counted,
                    e -> e.category().equals(m.category()),
                    t,
                    zone);
            if (m.campaignId() != null) {
                check(
                        out,
                        "campaign:" + m.campaignId(),
                        rule.caps().campaign(),
                        counted,
                        e -> m.campaignId().equals(e.campaign()),
                        t,
                        zone);
            }
            return out;
        }

        static void check(
                List<Violation> out,
                String scope,
                List<Limit> limits,
                List<Entry> counted,
                Predicate<Entry> inScope,
                long t,
                ZoneId zone) {
            for (Limit l : limits) {
                int count;
                if (l.isCalendar()) {
                    Object mine = period(l.calendar(), t, zone);
                    count =
                            (int)
                                    counted.stream()
                                            .filter(inScope)
                                            .filter(e -> e.period(l.calendar()).equals(mine))
                                            .count();
                } else {
                    count = 0;
                    for (long s = t - l.windowMillis() + GRID; s <= t; s += GRID) {
                        long from = s;
                        count =
                                Math.max(
                                        count,
                                        (int)
                                                counted.stream()
                                                        .filter(inScope)
                                                        .filter(
                                                                e ->
                                                                        e.t() >= from
                                                                                && e.t()
                                                                                        < from
                                                                                                + l
                                                                                                        .windowMillis())
                                                        .count());
                    }
                }
                if (count >= l.max()) {
                    out.add(Violation.of(scope, l, count));
                }
            }
        }
    }
}
