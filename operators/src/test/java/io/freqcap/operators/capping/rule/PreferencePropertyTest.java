package io.freqcap.operators.capping.rule;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.operators.capping.history.HistoryGrowth;
import io.freqcap.operators.capping.rule.SendTimePropertyTest.Oracle;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.preference.UserPreferences;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
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
    static final long GRID = SendTimePropertyTest.GRID;

    @Test
    void preferencesAndReceiptsMatchBruteForceOracle() throws Exception {
        Random rnd = new Random(20261126L);
        Map<String, Integer> seen = new TreeMap<>();
        for (int run = 0; run < 1500; run++) {
            String zone =
                    SendTimePropertyTest.ZONES[rnd.nextInt(SendTimePropertyTest.ZONES.length)];
            LimitConfig config = SendTimePropertyTest.randomConfig(rnd, zone);
            long clock = SendTimePropertyTest.nearDstChange(rnd, ZoneId.of(zone));
            UserPreferences prefs = randomPreferences(rnd, config, clock);
            Oracle oracle = new Oracle(config, ZoneId.of(zone));
            oracle.prefs = prefs;
            UserHistory history = UserHistory.EMPTY;
            int messages = 5 + rnd.nextInt(25);
            List<String> freed = new ArrayList<>();
            for (int i = 0; i < messages; i++) {
                clock += rnd.nextInt(12) * GRID;
                if (rnd.nextInt(5) == 0 && !oracle.counted.isEmpty()) {
                    // A failed receipt of a message already sent (not still held).
                    int k = rnd.nextInt(oracle.counted.size());
                    long sentAt = oracle.counted.get(k)[0];
                    long stamped = oracle.counted.get(k)[2];
                    long latest = oracle.counted.stream().mapToLong(e -> e[2]).max().getAsLong();
                    if (sentAt <= clock && stamped < latest) {
                        String id = oracle.ids.get(k);
                        history = (UserHistory) HistoryGrowth.shrunk(history, sentAt, id);
                        oracle.uncount(id);
                        freed.add(id);
                        seen.merge("uncounted", 1, Integer::sum);
                    }
                }
                long t = clock - (rnd.nextInt(10) < 2 ? rnd.nextInt(36) * GRID : 0);
                OutboundMessage m =
                        new OutboundMessage(
                                id(rnd, i, freed, oracle),
                                7,
                                SendTimePropertyTest.CHANNELS[rnd.nextInt(2)],
                                "marketing",
                                t,
                                rnd.nextBoolean() ? zone : null,
                                rnd.nextInt(4) == 0 ? null : "c" + rnd.nextInt(3),
                                0);
                RuleStep.Result got =
                        RuleStep.decide(
                                history, m, config, LimitConfig.DEFAULT_SEGMENT, false, prefs);
                Oracle.Result want = oracle.decide(m);
                String where = oracle.where(run, i, m, prefs) + " history " + history;
                Oracle.assertAgrees(want, got, where);
                for (Violation v : got.violations()) {
                    if (v.isPreference()) {
                        seen.merge(v.scope().replaceAll(":email|:push", ""), 1, Integer::sum);
                    }
                }
                if (got.sendAt() != null && t < oracle.pausedUntil()) {
                    seen.merge("held through a pause", 1, Integer::sum);
                }
                seen.merge(got.decision().name(), 1, Integer::sum);
                if (m.messageId().compareTo("m" + i) != 0 && got.decision() != Decision.DUPLICATE) {
                    seen.merge("retried", 1, Integer::sum);
                }
                history = got.history();
            }
            oracle.assertNoPeriodOverfilled();
        }
        for (String kind :
                List.of(
                        "preference:opt-out",
                        "preference:paused",
                        "preference:all",
                        "preference:channel",
                        "held through a pause",
                        "uncounted",
                        "retried",
                        "DUPLICATE",
                        "ALLOWED",
                        "REJECTED")) {
            assertTrue(seen.getOrDefault(kind, 0) > 100, kind + ": " + seen);
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
