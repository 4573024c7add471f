package io.freqcap.operators.capping.rule;

import static io.freqcap.operators.capping.rule.PropertyFixtures.GRID;
import static io.freqcap.operators.capping.rule.PropertyFixtures.assertReached;
import static io.freqcap.operators.capping.rule.PropertyFixtures.forEachRun;
import static io.freqcap.operators.capping.rule.PropertyFixtures.randomMessage;
import static io.freqcap.operators.capping.rule.PropertyFixtures.stamped;

import io.freqcap.operators.capping.history.HistoryGrowth;
import io.freqcap.operators.capping.rule.SendTimePropertyTest.Oracle;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.preference.UserPreferences;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Compares {@link CappingRule} with users' preferences (contract.md §10) and failed receipts (§11)
 * against the brute-force oracle of {@link SendTimePropertyTest}, extended with them as the
 * contract words them: an opt-out rejects without a retry, a pause closes every instant before its
 * end (a rule's {@code hold} may hold a message through it), the user's limits count with the
 * rule's, and a failed receipt takes its message out of the counted ones. Random rules with holds,
 * quiet hours and calendar days, in zones with DST and odd offsets; decisions, send times,
 * violations and {@code retryAfter} must be identical.
 *
 * <p>The user's rolling limits reach up to three times the rules' longest window, and calendar days
 * come under rules of minutes: the history kept must serve them too. Receipts name any message but
 * the one stamped latest: un-counting that one lowers the STALE horizon below what the kept history
 * can decide exactly (docs/design.md, "Receipts and STALE"), and this test compares exact
 * decisions.
 */
class PreferencePropertyTest {
    @Test
    void preferencesAndReceiptsMatchBruteForceOracle() throws Exception {
        Map<String, Integer> seen = new TreeMap<>();
        forEachRun(
                20261126L,
                1500,
                PropertyFixtures::randomConfig,
                (run, rnd) -> {
                    UserPreferences prefs = randomPreferences(rnd, run.config(), run.start());
                    Oracle oracle = new Oracle(run.config(), run.zoneId());
                    oracle.prefs = prefs;
                    UserHistory history = UserHistory.EMPTY;
                    long clock = run.start();
                    int messages = 5 + rnd.nextInt(25);
                    List<String> freed = new ArrayList<>();
                    for (int i = 0; i < messages; i++) {
                        clock += rnd.nextInt(12) * GRID;
                        // A failed receipt of a message already sent (not still held).
                        int k =
                                rnd.nextInt(5) == 0 && !oracle.counted.isEmpty()
                                        ? oracle.receiptTarget(rnd, clock)
                                        : -1;
                        if (k >= 0) {
                            String id = oracle.ids.get(k);
                            long sentAt = oracle.counted.get(k)[0];
                            history = (UserHistory) HistoryGrowth.shrunk(history, sentAt, id);
                            oracle.uncount(id);
                            freed.add(id);
                            seen.merge("uncounted", 1, Integer::sum);
                        }
                        long t = stamped(rnd, clock);
                        OutboundMessage m =
                                randomMessage(rnd, id(rnd, i, freed, oracle), t, run.zone());
                        RuleStep.Result got =
                                RuleStep.decide(
                                        history,
                                        m,
                                        run.config(),
                                        LimitConfig.DEFAULT_SEGMENT,
                                        new Judging.User(prefs, Long.MIN_VALUE, 0));
                        Oracle.Result want = oracle.decide(m);
                        String where =
                                oracle.where(run.number(), i, m, prefs) + " history " + history;
                        Oracle.assertAgrees(want, got, where);
                        count(seen, got, m, i, t < oracle.pausedUntil());
                        history = got.history();
                    }
                    oracle.assertNoPeriodOverfilled();
                });
        assertReached(
                seen,
                100,
                "preference:opt-out",
                "preference:paused",
                "preference:all",
                "preference:channel",
                "held through a pause",
                "uncounted",
                "retried",
                "DUPLICATE",
                "ALLOWED",
                "REJECTED");
    }

    /** Counts what a decision reached: preference violations, holds through a pause, retries. */
    private static void count(
            Map<String, Integer> seen,
            RuleStep.Result got,
            OutboundMessage m,
            int i,
            boolean stampedInAPause) {
        for (Violation v : got.violations()) {
            if (v.isPreference()) {
                seen.merge(v.scope().replaceAll(":email|:push", ""), 1, Integer::sum);
            }
        }
        if (got.sendAt() != null && stampedInAPause) {
            seen.merge("held through a pause", 1, Integer::sum);
        }
        seen.merge(got.decision().name(), 1, Integer::sum);
        if (m.messageId().compareTo("m" + i) != 0 && got.decision() != Decision.DUPLICATE) {
            seen.merge("retried", 1, Integer::sum);
        }
    }

    /**
     * A new id mostly; else a retry of a message a receipt un-counted (decided anew), or the id of
     * the latest counted message (DUPLICATE: the history the job keeps always has it).
     */
    private static String id(Random rnd, int i, List<String> freed, Oracle oracle) {
        int r = rnd.nextInt(10);
        if (r == 0 && !freed.isEmpty()) {
            return freed.remove(rnd.nextInt(freed.size()));
        }
        if (r == 1 && !oracle.ids.isEmpty()) {
            return oracle.ids.get(oracle.ids.size() - 1);
        }
        return "m" + i;
    }

    /**
     * Half the users have preferences: an opt-out of email, a pause of up to a day from near the
     * first message, limits on all messages and on email, each at random.
     */
    static UserPreferences randomPreferences(Random rnd, LimitConfig config, long start)
            throws Exception {
        if (rnd.nextBoolean()) {
            return null;
        }
        // up to three times the rules' longest window: the user's history must be kept for them
        long longestMinutes = 3 * config.longestWindowMillis() / 60_000;
        StringBuilder sb = new StringBuilder("{\"userId\":7,\"version\":1");
        if (rnd.nextInt(5) == 0) {
            sb.append(",\"optOut\":{\"channels\":[\"email\"]}");
        }
        if (rnd.nextInt(3) == 0) {
            sb.append(",\"pausedUntil\":").append(start + rnd.nextInt(24 * 12) * GRID);
        }
        if (rnd.nextBoolean()) {
            sb.append(",\"limits\":[")
                    .append(rolling(rnd, longestMinutes))
                    .append(rnd.nextInt(3) == 0 ? ",{\"calendar\":\"day\",\"max\":3}" : "")
                    .append(']');
        }
        if (rnd.nextBoolean()) {
            sb.append(",\"channels\":{\"email\":[")
                    .append(rolling(rnd, longestMinutes))
                    .append("]}");
        }
        sb.append('}');
        return UserPreferences.parse(sb.toString().getBytes(StandardCharsets.UTF_8), 7L);
    }

    private static String rolling(Random rnd, long longestMinutes) {
        long minutes = 5 * (1 + rnd.nextInt((int) Math.max(1, longestMinutes / 5)));
        return "{\"window\":\"" + minutes + "m\",\"max\":" + (1 + rnd.nextInt(3)) + "}";
    }
}
