package io.freqcap.operators.capping.rule;

import static io.freqcap.operators.capping.rule.PropertyFixtures.GRID;
import static io.freqcap.operators.capping.rule.PropertyFixtures.assertReached;
import static io.freqcap.operators.capping.rule.PropertyFixtures.forEachRun;
import static io.freqcap.operators.capping.rule.PropertyFixtures.limitsOf;
import static io.freqcap.operators.capping.rule.PropertyFixtures.randomMessage;
import static io.freqcap.operators.capping.rule.PropertyFixtures.stamped;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.operators.capping.decision.Engagements;
import io.freqcap.operators.capping.decision.Histories;
import io.freqcap.operators.capping.history.HistoryGrowth;
import io.freqcap.operators.capping.receipt.Receipts;
import io.freqcap.operators.capping.rule.SendTimePropertyTest.Oracle;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.HistoryEntry;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.preference.UserPreferences;
import io.freqcap.schema.receipt.DeliveryReceipt;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Compares {@link CappingRule} under rules with {@code fatigue} (contract.md §3, §6 "Fatigue") and
 * the user's engagement receipts (§11) against the brute-force oracle of {@link
 * SendTimePropertyTest}, extended as the contract words it: u counts the messages sent in (e, t],
 * each step multiplies a max by the scale in exact decimals and rounds down, never below the floor,
 * and a reserve keeps at most the lowered max. Random rules with holds, quiet hours, calendar days,
 * campaigns, reserves and preferences, in zones with DST and odd offsets, shadow rules with their
 * own fatigue; engagement and failed receipts arrive between the messages, as the job reads them
 * ({@link Receipts}). Decisions, send times, violations, {@code retryAfter}, shadow decisions and
 * whether a message was decided under a lowered cap must be identical.
 */
class FatiguePropertyTest {
    static final int[] PRIORITIES = {0, 10, 50, 50, 80, 100};

    @Test
    void fatigueAndEngagementsMatchBruteForceOracle() throws Exception {
        Map<String, Integer> seen = new TreeMap<>();
        forEachRun(
                20261127L,
                1500,
                FatiguePropertyTest::randomConfig,
                (run, rnd) -> {
                    LimitConfig config = run.config();
                    UserPreferences prefs =
                            rnd.nextInt(3) == 0
                                    ? PreferencePropertyTest.randomPreferences(
                                            rnd, config, run.start())
                                    : null;
                    Oracle oracle = new Oracle(config, run.zoneId());
                    oracle.prefs = prefs;
                    User user = new User();
                    long clock = run.start();
                    int messages = 10 + rnd.nextInt(40);
                    for (int i = 0; i < messages; i++) {
                        clock += rnd.nextInt(12) * GRID;
                        if (rnd.nextInt(3) == 0) {
                            engagement(rnd, clock, user, oracle, seen);
                        }
                        if (rnd.nextInt(8) == 0 && !oracle.counted.isEmpty()) {
                            failedReceipt(
                                    oracle.receiptTarget(rnd, clock), clock, user, oracle, seen);
                        }
                        OutboundMessage m =
                                randomMessage(
                                        rnd, "m" + i, stamped(rnd, clock), run.zone(), PRIORITIES);
                        RuleStep.Result got =
                                RuleStep.decide(
                                        user.history,
                                        m,
                                        config,
                                        LimitConfig.DEFAULT_SEGMENT,
                                        new Judging.User(prefs, user.engaged, 0));
                        boolean lowered = lowers(oracle, config.ruleFor("*"), m);
                        Oracle.Result want = oracle.decide(m);
                        String where =
                                oracle.where(run.number(), i, m, prefs)
                                        + " last engagement "
                                        + oracle.lastEngagement;
                        Oracle.assertAgrees(want, got, where);
                        if (config.hasShadow() && want.decision() != Decision.STALE) {
                            Oracle.assertShadowAgrees(want, got, where);
                        }
                        if (want.decision() != Decision.STALE) {
                            assertEquals(
                                    lowered,
                                    got.lowered(),
                                    "decided under a lowered cap, " + where);
                        }
                        count(seen, got, m, oracle);
                        user.history = got.history();
                    }
                    oracle.assertNoPeriodOverfilled();
                });
        assertReached(
                seen,
                30,
                "engaged",
                "engagement ignored",
                "uncounted",
                "lowered ALLOWED",
                "lowered held",
                "lowered REJECTED",
                "violation lowered",
                "violation lowered to the floor",
                "violation lowered with places kept",
                "violation lowered campaigns",
                "shadow violation lowered",
                "full cap after an open");
    }

    /**
     * An open, mostly of a message already sent, now and then stamped a little after the next
     * message's timestamp (receipts and messages share no order).
     */
    private static void engagement(
            Random rnd, long clock, User user, Oracle oracle, Map<String, Integer> seen)
            throws Exception {
        long at = clock - rnd.nextInt(24) * GRID;
        if (rnd.nextInt(6) == 0) {
            at = clock + rnd.nextInt(4) * GRID;
        }
        String status = rnd.nextBoolean() ? "opened" : "clicked";
        // §11: the last engagement when later than the one in force, of a user with something
        // counted; else nothing (receiptsIgnored).
        boolean applies = !user.history.isEmpty() && at > user.engaged;
        Receipts.Effect e = user.receipt(new DeliveryReceipt("m0", 7, status, at), at);
        assertEquals(applies, e instanceof Receipts.Engaged, at + " " + e);
        seen.merge(applies ? "engaged" : "engagement ignored", 1, Integer::sum);
        if (!oracle.counted.isEmpty()) {
            oracle.lastEngagement = Math.max(oracle.lastEngagement, at);
        }
    }

    /**
     * A failed receipt of counted message {@code k} (-1: none), which the oracle draws among those
     * already sent, not the one stamped latest (PreferencePropertyTest says why).
     */
    private static void failedReceipt(
            int k, long clock, User user, Oracle oracle, Map<String, Integer> seen)
            throws Exception {
        if (k < 0) {
            return;
        }
        String id = oracle.ids.get(k);
        long sentAt = oracle.counted.get(k)[0];
        Receipts.Effect e = user.receipt(new DeliveryReceipt(id, 7, "failed", clock), clock);
        if (e instanceof Receipts.Uncounted) {
            oracle.uncount(id);
            seen.merge("uncounted", 1, Integer::sum);
        } else {
            // only what the job no longer keeps: out of every window anyway
            long kept = 2 * oracle.config.keptWindowMillis();
            assertTrue(sentAt <= oracle.latestStamped() - kept, id + " " + e);
        }
    }

    /**
     * One user as the job keeps it: the history the rule reads and the last engagement receipts
     * leave, both changed only as {@link Receipts} says.
     */
    static final class User implements Histories, Engagements {
        UserHistory history = UserHistory.EMPTY;
        long engaged = Long.MIN_VALUE;

        Receipts.Effect receipt(DeliveryReceipt r, long at) throws Exception {
            Receipts.Effect e =
                    Receipts.of(
                            r,
                            7,
                            new Receipts.Time(at, Long.MAX_VALUE),
                            this,
                            this,
                            (u, h) -> false);
            if (e instanceof Receipts.Engaged g) {
                engaged = Math.max(engaged, g.at());
            } else if (e instanceof Receipts.Uncounted u) {
                history =
                        (UserHistory)
                                HistoryGrowth.shrunk(history, u.entry().timestamp(), u.messageId());
            }
            return e;
        }

        // Receipts only read the user: what a receipt changes, receipt() applies.
        @Override
        public CountedHistory get(long user) {
            return history;
        }

        @Override
        public long lastOf(long user) {
            return engaged;
        }

        @Override
        public void count(
                long user, CountedHistory before, HistoryEntry entry, long keptMillis, long now) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void uncount(long user, long countedAt, String messageId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void engage(long user, long at) {
            throw new UnsupportedOperationException();
        }
    }

    /** The oracle's word on whether fatigue lowers a limit the message falls under. */
    private static boolean lowers(Oracle oracle, Rule rule, OutboundMessage m) {
        Rule r = oracle.fatigued(rule, m.timestamp());
        return limitsOf(r, m).stream().anyMatch(l -> l.lowered() != null);
    }

    private static void count(
            Map<String, Integer> seen, RuleStep.Result got, OutboundMessage m, Oracle oracle) {
        if (got.lowered()) {
            seen.merge(
                    "lowered " + (got.sendAt() != null ? "held" : got.decision().name()),
                    1,
                    Integer::sum);
        }
        for (Violation x : got.violations()) {
            if (x instanceof Violation.Exceeded v && v.lowered() != null) {
                seen.merge("violation lowered", 1, Integer::sum);
                if (v.reserved() > 0) {
                    seen.merge("violation lowered with places kept", 1, Integer::sum);
                }
                if (v.scope().equals("campaigns")) {
                    seen.merge("violation lowered campaigns", 1, Integer::sum);
                }
                if (v.max() < v.lowered().configured() && v.max() > 0 && v.max() <= 2) {
                    seen.merge("violation lowered to the floor", 1, Integer::sum);
                }
            }
        }
        if (got.shadow() != null) {
            for (Violation v : got.shadow().violations()) {
                if (v instanceof Violation.Exceeded e && e.lowered() != null) {
                    seen.merge("shadow violation lowered", 1, Integer::sum);
                }
            }
        }
        Rule rule = oracle.config.ruleFor("*");
        if (rule.fatigue() != null
                && !got.lowered()
                && oracle.lastEngagement > m.timestamp() - rule.fatigue().windowMillis()
                && oracle.counted.stream()
                                .filter(
                                        c ->
                                                c[0] > m.timestamp() - rule.fatigue().windowMillis()
                                                        && c[0] <= m.timestamp())
                                .count()
                        >= rule.fatigue().after()) {
            seen.merge("full cap after an open", 1, Integer::sum);
        }
    }

    /** SendTimePropertyTest's configs, with fatigue on most rules and reserves on some limits. */
    static LimitConfig randomConfig(Random rnd, String zone) {
        return PropertyFixtures.randomConfig(rnd, zone, FatiguePropertyTest::randomRule);
    }

    private static final Pattern MAX = Pattern.compile("\"max\":(\\d+)}");

    static String randomRule(Random rnd) {
        String rule = PropertyFixtures.randomRule(rnd);
        // A reserve on some limits: 1..max places for priority 50 and above.
        Matcher mm = MAX.matcher(rule);
        StringBuilder withReserves = new StringBuilder();
        while (mm.find()) {
            int max = Integer.parseInt(mm.group(1));
            String reserve =
                    max > 0 && rnd.nextInt(3) == 0
                            ? ",\"reserve\":{\"slots\":"
                                    + (1 + rnd.nextInt(max))
                                    + ",\"priority\":50}"
                            : "";
            mm.appendReplacement(withReserves, "\"max\":" + max + reserve + "}");
        }
        mm.appendTail(withReserves);
        rule = withReserves.toString();
        if (rnd.nextInt(4) == 0) {
            return rule;
        }
        int[] floors = {0, 0, 1, 1, 2, 1_000_000};
        String fatigue =
                ",\"fatigue\":{\"after\":"
                        + (1 + rnd.nextInt(4))
                        + ",\"scale\":0."
                        + String.format("%02d", 1 + rnd.nextInt(99))
                        + ",\"floor\":"
                        + floors[rnd.nextInt(floors.length)]
                        + ",\"window\":\""
                        + 15 * (1 + rnd.nextInt(4 * 48))
                        + "m\"}";
        return rule.substring(0, rule.length() - 1) + fatigue + "}";
    }

    /**
     * Maxes of 50 to 180 whose steps a double would round down one too far (50 × 0.58 is 28.999...
     * in binary floating point): a burst of messages whose count stands just below the exact
     * lowered max is ALLOWED, and only then.
     */
    @Test
    void scaleIsReadInHundredthsNotAsAFloat() throws Exception {
        int[][] cases = {{50, 58}, {90, 70}, {100, 29}, {100, 57}, {150, 82}, {180, 35}};
        long start = Instant.parse("2026-11-02T00:00:00Z").toEpochMilli();
        for (int[] c : cases) {
            int max = c[0];
            int exact = max * c[1] / 100;
            String json =
                    "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\","
                            + "\"max\":"
                            + max
                            + "}],\"fatigue\":{\"after\":"
                            + (exact + 2)
                            + ",\"scale\":0."
                            + c[1]
                            + ",\"floor\":1,\"window\":\"7d\"}}]}";
            LimitConfig config = LimitConfig.parse(json);
            Oracle oracle = new Oracle(config, ZoneId.of("UTC"));
            UserHistory history = UserHistory.EMPTY;
            // A day before: enough that u is one step; then a day of exact - 1 and two more.
            List<Long> times = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                times.add(start + i * GRID);
            }
            for (int i = 0; i < exact + 1; i++) {
                times.add(start + 86_400_000L + i * GRID);
            }
            List<Decision> decisions = new ArrayList<>();
            for (int i = 0; i < times.size(); i++) {
                OutboundMessage m =
                        new OutboundMessage(
                                "m" + i, 7, "push", "marketing", times.get(i), null, null, 0);
                RuleStep.Result got = RuleStep.decide(history, m, config, "*");
                Oracle.Result want = oracle.decide(m);
                Oracle.assertAgrees(want, got, json + " message " + i);
                decisions.add(got.decision());
                history = got.history();
            }
            // u counts every message of the week: the day's exact-th message passes at a
            // lowered max of `exact` only while u stays below two steps.
            assertEquals(Decision.ALLOWED, decisions.get(decisions.size() - 2), json);
        }
    }
}
