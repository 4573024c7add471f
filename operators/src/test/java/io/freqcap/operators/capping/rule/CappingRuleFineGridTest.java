package io.freqcap.operators.capping.rule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Violations;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.OutboundMessage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The promise of contract.md §6 checked on a 1 ms grid, where neighbouring entries differ by the
 * smallest step there is: windows of 1–50 ms, the config changing between messages, the user's
 * segment (and so its rule) changing too. After every ALLOWED message, no interval of any limit in
 * force holds more than its max; every REJECTED message would have broken one, and its {@code
 * retryAfter} is the first millisecond at which it would not.
 */
class CappingRuleFineGridTest {
    static final long W = 50; // every config's longest window: histories always reach back 2W
    static final String[] SEGMENTS = {"a", "b", LimitConfig.DEFAULT_SEGMENT};
    static final String[] CHANNELS = {"push", "email"};

    static Limit limit(long w, int max) {
        return Limit.rolling(w + "ms", w, max);
    }

    static LimitConfig randomConfig(Random rnd, long version) {
        Map<String, Rule> rules = new LinkedHashMap<>();
        for (String s : SEGMENTS) {
            List<Limit> limits = new ArrayList<>();
            limits.add(limit(W, 4 + rnd.nextInt(4)));
            int n = 1 + rnd.nextInt(2);
            for (int i = 0; i < n; i++) {
                limits.add(
                        limit(
                                1 + rnd.nextInt((int) W - 1),
                                rnd.nextInt(15) == 0 ? 0 : 1 + rnd.nextInt(4)));
            }
            Map<String, List<Limit>> channels =
                    rnd.nextBoolean()
                            ? Map.of(
                                    "email",
                                    List.of(limit(1 + rnd.nextInt((int) W), 1 + rnd.nextInt(2))))
                            : Map.of();
            rules.put(
                    s,
                    new Rule(
                            s,
                            new Rule.Caps(
                                    limits, channels, Map.of(), List.of(), List.of(), List.of()),
                            Rule.Deferral.NONE,
                            false,
                            null));
        }
        return LimitConfig.of(version, rules);
    }

    /** Counted entries: {timestamp, channel index}. */
    static int mostAround(List<long[]> counted, long t, long w, int ch, long extra) {
        int most = 0;
        for (long s = t - w + 1; s <= t; s++) {
            int n = extra >= s && extra < s + w ? 1 : 0;
            for (long[] e : counted) {
                if ((ch < 0 || e[1] == ch) && e[0] >= s && e[0] < s + w) {
                    n++;
                }
            }
            most = Math.max(most, n);
        }
        return most;
    }

    /** Whether a message at t (channel ch) would break a limit of the rule. */
    static boolean breaks(List<long[]> counted, Rule rule, String channel, int ch, long t) {
        for (Limit l : rule.caps().all()) {
            if (mostAround(counted, t, l.windowMillis(), -1, t) > l.max()) {
                return true;
            }
        }
        for (Limit l : rule.channelLimits(channel)) {
            if (mostAround(counted, t, l.windowMillis(), ch, t) > l.max()) {
                return true;
            }
        }
        return false;
    }

    @Test
    void noIntervalOfAnyLimitInForceEverHoldsMoreThanItsMax() {
        Random rnd = new Random(20261123L);
        int allowed = 0;
        int rejected = 0;
        for (int run = 0; run < 600; run++) {
            long version = 1;
            LimitConfig config = randomConfig(rnd, version);
            UserHistory history = UserHistory.EMPTY;
            List<long[]> counted = new ArrayList<>();
            long clock = 1_000 + rnd.nextInt(100);
            for (int i = 0; i < 60; i++) {
                if (rnd.nextInt(8) == 0) {
                    config = randomConfig(rnd, ++version);
                }
                clock += rnd.nextInt(3);
                long t = Math.max(0, clock - (rnd.nextInt(3) == 0 ? rnd.nextInt(20) : 0));
                int ch = rnd.nextInt(2);
                String segment = SEGMENTS[rnd.nextInt(SEGMENTS.length)];
                OutboundMessage m = new OutboundMessage("m" + i, 9, CHANNELS[ch], "marketing", t);
                RuleStep.Result v = RuleStep.decide(history, m, config, segment);
                history = v.history();
                Rule rule = config.ruleFor(segment);
                String where = "run " + run + ", message " + i + " at " + t + " in " + segment;
                if (v.decision() == Decision.ALLOWED) {
                    assertTrue(!breaks(counted, rule, CHANNELS[ch], ch, t), where + " overfills");
                    counted.add(new long[] {t, ch});
                    allowed++;
                } else if (v.decision() == Decision.REJECTED) {
                    assertTrue(breaks(counted, rule, CHANNELS[ch], ch, t), where + " fits");
                    rejected++;
                    if (v.retryAfter() != null) {
                        long r = v.retryAfter();
                        assertTrue(!breaks(counted, rule, CHANNELS[ch], ch, r), where + " retry");
                        if (r > t) {
                            assertTrue(
                                    breaks(counted, rule, CHANNELS[ch], ch, r - 1),
                                    where + " retryAfter " + r + " is not the earliest");
                        }
                    }
                }
            }
        }
        assertTrue(allowed > 3_000 && rejected > 3_000, allowed + " allowed, " + rejected);
    }

    @Test
    void anEntryOneMillisecondAfterAnotherStartsAnIntervalOfItsOwn() {
        // entries at 0, 1, 1000, 1000 under 1s/3: the interval [1, 1001) holds 1, 1000, 1000,
        // and would hold the message at 500 as its fourth
        LimitConfig oneSecondThree =
                CappingRuleTest.config(
                        "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                                + "[{\"window\":\"1s\",\"max\":3}]}]}");
        CappingRuleTest.UserHistoryBuilder user =
                new CappingRuleTest.UserHistoryBuilder(oneSecondThree);
        long t0 = 1_763_769_600_000L;
        assertEquals(Decision.ALLOWED, user.send("a", "push", t0).decision());
        assertEquals(Decision.ALLOWED, user.send("b", "push", t0 + 1).decision());
        assertEquals(Decision.ALLOWED, user.send("c", "push", t0 + 1000).decision());
        assertEquals(Decision.ALLOWED, user.send("d", "push", t0 + 1000).decision());
        RuleStep.Result v = user.send("e", "push", t0 + 500);
        assertEquals(Decision.REJECTED, v.decision());
        assertEquals(List.of(Violations.rolling("all", "1s", 3, 3)), v.violations());
        assertNotNull(v.retryAfter());
    }
}
