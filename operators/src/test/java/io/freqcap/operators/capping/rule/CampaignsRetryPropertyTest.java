package io.freqcap.operators.capping.rule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.OutboundMessage;
import java.time.Instant;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A message rejected under a rule with {@code campaigns} limits and others gets as {@code
 * retryAfter} the earliest time at or after it, outside quiet hours, at which both pass
 * (contract.md §6): the one search over both sides' candidates answers as asking each side in turn
 * for its earliest time from the other's (the algorithm before issue 58, the oracle here) does, on
 * seeded random histories of two campaigns on two channels, rolling and calendar limits on either
 * side, quiet hours or none, messages late and in order.
 */
class CampaignsRetryPropertyTest {
    static final long MONDAY = Instant.parse("2025-11-17T00:00:00Z").toEpochMilli();
    static final long HOUR = 3_600_000L;

    @Test
    void oneSearchAnswersAsAskingEachSideInTurn() throws Exception {
        Random rnd = new Random(58);
        int rejected = 0;
        int laterThanBothAlone = 0;
        for (int round = 0; round < 3_000; round++) {
            long unit = rnd.nextBoolean() ? 1_000L : HOUR;
            String config = config(rnd, unit);
            LimitConfig limits = LimitConfig.parse(config);
            CountedHistory h = history(rnd, unit, rnd.nextInt(40));
            long first = first(h);
            long t =
                    h.isEmpty() || rnd.nextInt(4) == 0
                            ? h.isEmpty() ? MONDAY : h.latest() + rnd.nextInt(3) * unit
                            : first + (long) (rnd.nextDouble() * (h.latest() - first));
            OutboundMessage m = message(rnd.nextBoolean() ? "C" : "A", "push", t);
            Verdict v = CappingRule.judge(h, m, Judging.of(limits, "*"));
            if (v.decision() != Decision.REJECTED) {
                continue;
            }
            rejected++;
            Long expected = DistinctCampaignsOracle.alternating(h, m, config);
            assertEquals(
                    expected,
                    v.retryAfter(),
                    () -> "config " + config + " t " + t + " history " + describe(h));
            LimitConfig othersOnly = LimitConfig.parse(withoutCampaigns(config));
            Verdict others = CappingRule.judge(h, m, Judging.of(othersOnly, "*"));
            if (expected != null
                    && others.decision() == Decision.REJECTED
                    && others.retryAfter() != null
                    && expected > others.retryAfter()) {
                laterThanBothAlone++;
            }
        }
        // The draws reach the shape that needs more than one round.
        assertTrue(rejected > 500, "rejected " + rejected);
        assertTrue(laterThanBothAlone > 20, "past the others' own earliest " + laterThanBothAlone);
    }

    static String config(Random rnd, long unit) {
        String u = unit == HOUR ? "h" : "s";
        // A week's limit no message reaches keeps the longest window of both configs the same
        // (it decides what is STALE).
        StringBuilder rule =
                new StringBuilder(
                        "{\"segment\":\"*\",\"limits\":[{\"window\":\"7d\",\"max\":100000},");
        rule.append(rolling(rnd, u));
        if (rnd.nextInt(3) == 0) {
            rule.append(",{\"calendar\":\"day\",\"max\":").append(2 + rnd.nextInt(6)).append('}');
        }
        rule.append("],\"channels\":{\"push\":[").append(rolling(rnd, u)).append("]}");
        rule.append(",\"campaigns\":[");
        rule.append(
                rnd.nextInt(4) == 0
                        ? "{\"calendar\":\"day\",\"max\":" + (1 + rnd.nextInt(2)) + "}"
                        : "{\"window\":\""
                                + (1 + rnd.nextInt(5))
                                + u
                                + "\",\"max\":"
                                + (1 + rnd.nextInt(2))
                                + "}");
        rule.append(']');
        if (unit == HOUR && rnd.nextInt(3) == 0) {
            rule.append(
                    ",\"quietHours\":{\"from\":\"22:00\",\"to\":\"06:00\",\"channels\":[\"push\"]}");
        }
        rule.append('}');
        return "{\"version\":1,\"rules\":[" + rule + "]}";
    }

    private static String rolling(Random rnd, String u) {
        return "{\"window\":\""
                + (1 + rnd.nextInt(5))
                + u
                + "\",\"max\":"
                + (1 + rnd.nextInt(4))
                + "}";
    }

    static String withoutCampaigns(String config) {
        return config.replaceAll(",\"campaigns\":\\[[^\\]]*\\]", "");
    }

    /** n messages alternating campaigns A and B on push and email, a unit or two apart. */
    static CountedHistory history(Random rnd, long unit, int n) {
        long[] ts = new long[n];
        long[] fps = new long[n];
        int[] channel = new int[n];
        String[] campaigns = new String[n];
        long at = MONDAY + rnd.nextInt(20) * unit;
        for (int i = 0; i < n; i++) {
            at += rnd.nextInt(3) * unit / 2 + rnd.nextInt(2);
            ts[i] = at;
            fps[i] = i + 1;
            channel[i] = i % 2;
            campaigns[i] = i % 2 == 0 ? "A" : "B";
        }
        return UserHistory.entries(ts, fps, channel, new String[] {"push", "email"})
                .campaigns(campaigns)
                .build();
    }

    static OutboundMessage message(String campaign, String channel, long t) {
        return new OutboundMessage("m", 1, channel, "marketing", t, null, campaign, 0);
    }

    private static long[] timestamps(CountedHistory h) {
        long[] ts = new long[h.size()];
        int[] i = {0};
        h.forEachCampaign(Long.MIN_VALUE, Long.MAX_VALUE, (t, offset, c) -> ts[i[0]++] = t);
        return ts;
    }

    private static long first(CountedHistory h) {
        return h.isEmpty() ? MONDAY : timestamps(h)[0];
    }

    private static String describe(CountedHistory h) {
        return Arrays.toString(timestamps(h));
    }
}
