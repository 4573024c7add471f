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
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Compares {@link CappingRule} with a brute-force oracle written from contract.md §6 on thousands
 * of random user histories: out-of-order timestamps, two channels, duplicates, exempt messages.
 *
 * <p>The oracle checks every interval. To keep that finite, timestamps and windows are whole
 * multiples of {@link #GRID} milliseconds; then the content of [s, s + w) is the same for every s
 * in (k·GRID − GRID, k·GRID], so checking the starts on the grid is checking every start.
 */
class CappingRulePropertyTest {
    static final long GRID = 100;
    static final long SEED = 20261122L;
    static final String[] CHANNELS = {"push", "email"};

    @Test
    void matchesBruteForceOracleOnRandomHistories() {
        Random rnd = new Random(SEED);
        int decided = 0;
        int rejected = 0;
        java.util.Map<String, Integer> byScope = new java.util.TreeMap<>();
        int shadowRejected = 0;
        for (int run = 0; run < 3000; run++) {
            LimitConfig config = randomConfig(rnd);
            Oracle oracle = new Oracle(config);
            UserHistory history = UserHistory.EMPTY;
            List<String> ids = new ArrayList<>();
            long clock = rnd.nextInt(1000) * GRID;
            int messages = 5 + rnd.nextInt(40);
            for (int i = 0; i < messages; i++) {
                clock += rnd.nextInt(30) * GRID;
                // Mostly near the clock, sometimes far behind it (late) or ahead of it.
                long t =
                        Math.max(
                                0,
                                clock
                                        + (rnd.nextInt(10) < 3 ? -rnd.nextInt(150) : rnd.nextInt(5))
                                                * GRID);
                String id =
                        !ids.isEmpty() && rnd.nextInt(10) == 0
                                ? ids.get(rnd.nextInt(ids.size()))
                                : "m" + run + "-" + i;
                ids.add(id);
                String channel = CHANNELS[rnd.nextInt(2)];
                int c = rnd.nextInt(15);
                String category = c == 0 ? "transactional" : c < 6 ? "promo" : "marketing";
                String campaign = rnd.nextInt(3) == 0 ? null : "c" + rnd.nextInt(3);
                // Priorities around the reserves' (see randomConfig), most messages below them.
                int priority = rnd.nextInt(4) == 0 ? 60 + rnd.nextInt(41) : rnd.nextInt(60);
                OutboundMessage m =
                        new OutboundMessage(id, 7, channel, category, t, null, campaign, priority);

                RuleStep.Result v =
                        RuleStep.decide(history, m, config, LimitConfig.DEFAULT_SEGMENT);
                Oracle.Result expected = oracle.decide(m);
                String where = "run " + run + ", message " + i + " " + m;
                assertEquals(expected.decision, v.decision(), where);
                if (v.shadow() != null || expected.shadow() != null) {
                    assertEquals(expected.shadow(), v.shadow().decision(), "shadow " + where);
                    assertEquals(
                            expected.shadowViolations(),
                            v.shadow().violations(),
                            "shadow " + where);
                    shadowRejected += v.shadow().decision() == Decision.REJECTED ? 1 : 0;
                }
                if (v.decision() == Decision.REJECTED) {
                    assertEquals(expected.violations, v.violations(), where);
                    assertEquals(expected.retryAfter, v.retryAfter(), where);
                    rejected++;
                    for (Violation x : v.violations()) {
                        byScope.merge(x.scope().replaceAll(":.*", ""), 1, Integer::sum);
                        byScope.merge(
                                "reserved",
                                x instanceof Violation.Exceeded e && e.reserved() > 0 ? 1 : 0,
                                Integer::sum);
                    }
                }
                history = v.history();
                decided++;
            }
            oracle.assertNoIntervalOverfilled();
        }
        // The generator must exercise the interesting paths, or the comparison proves little.
        assertTrue(decided > 50_000, "decided " + decided);
        assertTrue(rejected > decided / 10, "rejected " + rejected + " of " + decided);
        assertTrue(shadowRejected > 1000, "shadow rejected " + shadowRejected);
        for (String scope : List.of("all", "channel", "category", "campaign", "campaigns")) {
            assertTrue(byScope.getOrDefault(scope, 0) > 500, "violations by scope: " + byScope);
        }
        assertTrue(byScope.getOrDefault("reserved", 0) > 500, "reserved places: " + byScope);
    }

    @Test
    void equalsClassicSlidingLogForInOrderTimestamps() {
        Random rnd = new Random(SEED + 1);
        for (int run = 0; run < 2000; run++) {
            LimitConfig config = randomConfig(rnd);
            List<Long> counted = new ArrayList<>();
            UserHistory history = UserHistory.EMPTY;
            long t = rnd.nextInt(1_000_000);
            for (int i = 0; i < 30; i++) {
                t += rnd.nextInt(3000);
                OutboundMessage m = new OutboundMessage("m" + i, 1, "push", "marketing", t);
                RuleStep.Result v =
                        RuleStep.decide(history, m, config, LimitConfig.DEFAULT_SEGMENT);
                boolean classic = true;
                for (Limit l : config.ruleFor("*").caps().all()) {
                    long now = t;
                    long inWindow =
                            counted.stream().filter(b -> b > now - l.windowMillis()).count();
                    classic &= inWindow < Oracle.effectiveMax(l, m);
                }
                assertEquals(classic, v.decision() == Decision.ALLOWED, "run " + run + " i " + i);
                if (classic) {
                    counted.add(t);
                }
                history = v.history();
            }
        }
    }

    static LimitConfig randomConfig(Random rnd) {
        StringBuilder sb =
                new StringBuilder("{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[");
        int n = 1 + rnd.nextInt(2);
        for (int i = 0; i < n; i++) {
            int max = rnd.nextInt(12) == 0 ? 0 : 1 + rnd.nextInt(4);
            sb.append(i > 0 ? "," : "")
                    .append("{\"window\":\"")
                    .append(1 + rnd.nextInt(5))
                    .append("s\",\"max\":")
                    .append(max);
            if (max > 0 && rnd.nextInt(3) == 0) {
                sb.append(",\"reserve\":{\"slots\":")
                        .append(1 + rnd.nextInt(max))
                        .append(",\"priority\":")
                        .append(40 + rnd.nextInt(50))
                        .append('}');
            }
            sb.append('}');
        }
        sb.append("]");
        if (rnd.nextBoolean()) {
            sb.append(",\"channels\":{\"email\":[").append(seconds(rnd, 1, 3, 2)).append("]}");
        }
        if (rnd.nextInt(3) == 0) {
            sb.append(",\"categories\":{\"promo\":[").append(seconds(rnd, 1, 4, 2)).append("]}");
        }
        if (rnd.nextInt(3) == 0) {
            // At most one or two distinct campaigns (of c0, c1, c2) in a window.
            sb.append(",\"campaigns\":[").append(seconds(rnd, 2, 6, 2)).append(']');
        }
        if (rnd.nextInt(3) == 0) {
            sb.append(",\"campaign\":[").append(seconds(rnd, 1, 6, 2)).append(']');
        }
        sb.append("}]");
        if (rnd.nextBoolean()) {
            sb.append(",\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":[")
                    .append(seconds(rnd, 1, 8, 3))
                    .append("],\"campaign\":[{\"window\":\"2s\",\"max\":1}]}]}");
        }
        sb.append(",\"exempt\":[\"transactional\"]}");
        return CappingRuleTest.config(sb.toString());
    }

    /**
     * A rolling limit of whole seconds, as the config topic carries it: a window of {@code
     * shortest} to {@code shortest + windows - 1} seconds, then a max of 1 to {@code maxes}.
     */
    static String seconds(Random rnd, int shortest, int windows, int maxes) {
        int window = shortest + rnd.nextInt(windows);
        return "{\"window\":\"" + window + "s\",\"max\":" + (1 + rnd.nextInt(maxes)) + "}";
    }

    /** contract.md §5–§6 read literally: keeps every counted message and tries every interval. */
    static final class Oracle {
        final LimitConfig config;
        final List<long[]> counted = new ArrayList<>(); // {timestamp, channel index}
        final List<String> countedIds = new ArrayList<>();
        final List<String> countedCategories = new ArrayList<>();
        final List<String> countedCampaigns = new ArrayList<>();
        final Set<Integer> channelsWithLimits = new HashSet<>();

        Oracle(LimitConfig config) {
            this.config = config;
        }

        record Result(
                Decision decision,
                List<Violation> violations,
                Long retryAfter,
                Decision shadow,
                List<Violation> shadowViolations) {
            Result(Decision decision, List<Violation> violations, Long retryAfter) {
                this(decision, violations, retryAfter, null, null);
            }
        }

        Result decide(OutboundMessage m) {
            if (config.isExempt(m.category())) {
                return new Result(Decision.EXEMPT, List.of(), null);
            }
            long w = config.longestWindowMillis();
            long kept = config.keptWindowMillis();
            long latest = counted.stream().mapToLong(e -> e[0]).max().orElse(Long.MIN_VALUE);
            for (int i = 0; i < counted.size(); i++) {
                // "as far back as its history is kept": twice the longest window of the rules
                // and the shadow rules.
                if (countedIds.get(i).equals(m.messageId())
                        && counted.get(i)[0] > latest - 2 * kept) {
                    return new Result(Decision.DUPLICATE, List.of(), null);
                }
            }
            if (!counted.isEmpty() && m.timestamp() < latest - w) {
                return new Result(Decision.STALE, List.of(), null);
            }
            int ch = channelIndex(m.channel());
            List<Violation> violations = violationsAt(m.timestamp(), ch, m);
            List<Violation> shadow =
                    config.hasShadow()
                            ? violationsAt(config.shadowRuleFor("*"), m.timestamp(), ch, m)
                            : null;
            Decision shadowDecision =
                    shadow == null ? null : shadow.isEmpty() ? Decision.ALLOWED : Decision.REJECTED;
            if (violations.isEmpty()) {
                counted.add(new long[] {m.timestamp(), ch});
                countedIds.add(m.messageId());
                countedCategories.add(m.category());
                countedCampaigns.add(m.campaignId());
                return new Result(Decision.ALLOWED, List.of(), null, shadowDecision, shadow);
            }
            Long retry = null;
            boolean zero =
                    PropertyFixtures.limitsOf(config.ruleFor("*"), m).stream()
                            .anyMatch(l -> effectiveMax(l, m) == 0);
            if (!zero) {
                for (long at = m.timestamp(); ; at += GRID) {
                    if (violationsAt(at, ch, m).isEmpty()) {
                        retry = at;
                        break;
                    }
                }
            }
            return new Result(Decision.REJECTED, violations, retry, shadowDecision, shadow);
        }

        List<Violation> violationsAt(long t, int ch, OutboundMessage m) {
            return violationsAt(config.ruleFor("*"), t, ch, m);
        }

        /** contract.md §6, "Reserved places": L − k for a message below the reserve's priority. */
        static int effectiveMax(Limit l, OutboundMessage m) {
            boolean kept = l.reserve() != null && m.priority() < l.reserve().priority();
            return kept ? l.max() - l.reserve().slots() : l.max();
        }

        List<Violation> violationsAt(Rule rule, long t, int ch, OutboundMessage m) {
            List<Violation> out = new ArrayList<>();
            check(out, "all", rule.caps().all(), t, m, i -> true);
            check(
                    out,
                    "channel:" + m.channel(),
                    rule.channelLimits(m.channel()),
                    t,
                    m,
                    i -> counted.get(i)[1] == ch);
            check(
                    out,
                    "category:" + m.category(),
                    rule.categoryLimits(m.category()),
                    t,
                    m,
                    i -> countedCategories.get(i).equals(m.category()));
            if (m.campaignId() != null) {
                check(
                        out,
                        "campaign:" + m.campaignId(),
                        rule.caps().campaign(),
                        t,
                        m,
                        i -> m.campaignId().equals(countedCampaigns.get(i)));
                for (Limit l : rule.caps().campaigns()) {
                    int[] most = distinctCampaigns(t, l.windowMillis(), m.campaignId());
                    if (most[1] > effectiveMax(l, m)) {
                        out.add(Violation.of("campaigns", l.forPriority(m.priority()), most[0]));
                    }
                }
            }
            return out;
        }

        /**
         * Over every interval of window w containing t: the most distinct campaigns it holds, and
         * the most with {@code own}.
         */
        int[] distinctCampaigns(long t, long w, String own) {
            int most = 0;
            int withOwn = 0;
            for (long s = t - w + GRID; s <= t; s += GRID) {
                Set<String> in = new HashSet<>();
                for (int i = 0; i < counted.size(); i++) {
                    long e = counted.get(i)[0];
                    if (countedCampaigns.get(i) != null && e >= s && e < s + w) {
                        in.add(countedCampaigns.get(i));
                    }
                }
                most = Math.max(most, in.size());
                in.add(own);
                withOwn = Math.max(withOwn, in.size());
            }
            return new int[] {most, withOwn};
        }

        private void check(
                List<Violation> out,
                String scope,
                List<Limit> limits,
                long t,
                OutboundMessage m,
                java.util.function.IntPredicate inScope) {
            for (Limit l : limits) {
                int most = mostInIntervalsContaining(t, l.windowMillis(), inScope);
                int max = effectiveMax(l, m);
                if (most + 1 > max) {
                    out.add(Violations.reserved(scope, l.window(), l.max(), most, l.max() - max));
                }
            }
        }

        int mostInIntervalsContaining(long t, long w, java.util.function.IntPredicate inScope) {
            int most = 0;
            for (long s = t - w + GRID; s <= t; s += GRID) {
                int n = 0;
                for (int i = 0; i < counted.size(); i++) {
                    long[] e = counted.get(i);
                    if (inScope.test(i) && e[0] >= s && e[0] < s + w) {
                        n++;
                    }
                }
                most = Math.max(most, n);
            }
            return most;
        }

        int channelIndex(String channel) {
            return channel.equals("push") ? 0 : 1;
        }

        /** The promise itself: no interval of any window holds more than its max. */
        void assertNoIntervalOverfilled() {
            if (counted.isEmpty()) {
                return;
            }
            long lo = counted.stream().mapToLong(e -> e[0]).min().getAsLong();
            long hi = counted.stream().mapToLong(e -> e[0]).max().getAsLong();
            for (Limit l : config.ruleFor("*").caps().all()) {
                for (long s = lo - l.windowMillis(); s <= hi; s += GRID) {
                    long start = s;
                    long n =
                            counted.stream()
                                    .filter(e -> e[0] >= start && e[0] < start + l.windowMillis())
                                    .count();
                    assertTrue(n <= l.max(), "interval at " + s + " holds " + n + " > " + l.max());
                }
            }
            for (Limit l : config.ruleFor("*").caps().campaigns()) {
                for (long s = lo - l.windowMillis(); s <= hi; s += GRID) {
                    Set<String> in = new HashSet<>();
                    for (int i = 0; i < counted.size(); i++) {
                        long e = counted.get(i)[0];
                        if (countedCampaigns.get(i) != null && e >= s && e < s + l.windowMillis()) {
                            in.add(countedCampaigns.get(i));
                        }
                    }
                    assertTrue(in.size() <= l.max(), "interval at " + s + " holds " + in);
                }
            }
        }
    }
}
