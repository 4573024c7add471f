package io.freqcap.operators.capping.decision;

import static io.freqcap.operators.capping.CappingFixtures.NOV_22_10H;
import static io.freqcap.operators.capping.CappingFixtures.NOV_22_22H10;
import static io.freqcap.operators.capping.CappingFixtures.NOV_22_23H30;
import static io.freqcap.operators.capping.CappingFixtures.NOV_23_8H;
import static io.freqcap.operators.capping.CappingFixtures.PRIORITY_CONFIG;
import static io.freqcap.operators.capping.CappingFixtures.heldNow;
import static io.freqcap.operators.capping.CappingFixtures.promotion;
import static io.freqcap.operators.capping.CappingFixtures.pushEntry;
import static io.freqcap.operators.capping.CappingHarnesses.audits;
import static io.freqcap.operators.capping.CappingHarnesses.deliveries;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.capping.CappingHarnesses;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.capping.MirrorModel;
import io.freqcap.schema.Records;
import io.freqcap.schema.SharedFiles;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A price alert takes the morning slot from a promotion (contract.md §6, "Preemption", the story of
 * {@code examples/limit-config-priority.json} and {@code examples/audit-preempted.json}): in the
 * capping operator on RocksDB, with the Redis mirror, across a checkpoint and a restore.
 */
public class PreemptionTest {
    /** The PREEMPTED record of the contract's example, {@code examples/audit-preempted.json}. */
    static final String AUDIT_PREEMPTED =
            "{\"decision\":\"PREEMPTED\",\"messageId\":\"m-000400\",\"userId\":42,"
                    + "\"segment\":\"*\",\"channel\":\"push\",\"timestamp\":1763845800000,"
                    + "\"configVersion\":11,\"sendAt\":1763881200000,\"preemptedBy\":\"m-000412\","
                    + "\"reason\":\"preempted by m-000412 (priority 80 over 10)\","
                    + "\"message\":{\"messageId\":\"m-000400\",\"userId\":42,\"channel\":\"push\","
                    + "\"priority\":10,\"campaignId\":\"weekend-promo\","
                    + "\"timestamp\":1763845800000,\"timezone\":\"Europe/Berlin\"}}";

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    InboundMessage message(String id, long t, String campaign, int priority) {
        return Records.message(id, 42, t)
                .timezone("Europe/Berlin")
                .campaign(campaign)
                .priority(priority)
                .inbound(harnesses.nextOffset());
    }

    /** The day's message, then the promotion held for the morning; processing time 22:10. */
    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> promotionHeld(
            String config) throws Exception {
        var h = harnesses.openWithMirror(config, null);
        h.setProcessingTime(NOV_22_10H);
        h.processElement(message("m-000390", NOV_22_10H, "daily", 0), NOV_22_10H);
        h.setProcessingTime(NOV_22_22H10);
        h.processElement(promotion(), NOV_22_22H10);
        assertEquals(1, deliveries(h).size(), "the day's message out, the promotion held");
        assertEquals(1, h.numProcessingTimeTimers());
        return h;
    }

    /**
     * contract.md v5 §6: a message its rule rejects may preempt also when its user's own limit is
     * broken too, each step decided in full; its shadow decision reads the history it found.
     */
    @Test
    void anAlertTakesTheSlotAlsoUnderTheUsersOwnOneADayAndItsShadowSeesTheSlotTaken()
            throws Exception {
        String shadowed =
                PRIORITY_CONFIG.replace(
                        ",\"exempt\"",
                        ",\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":[{\"calendar\":"
                                + "\"day\",\"max\":1}],\"hold\":\"12h\",\"quietHours\":"
                                + "{\"from\":\"21:00\",\"to\":\"08:00\"}}]},\"exempt\"");
        var h = harnesses.openWithMirror(shadowed, null);
        h.processElement(
                Records.preference(
                        42L,
                        "{\"userId\":42,\"version\":1,\"limits\":[{\"calendar\":\"day\","
                                + "\"max\":1}]}",
                        harnesses.nextOffset()),
                0);
        h.setProcessingTime(NOV_22_10H);
        h.processElement(message("m-000390", NOV_22_10H, "daily", 0), NOV_22_10H);
        h.setProcessingTime(NOV_22_22H10);
        h.processElement(promotion(), NOV_22_22H10);
        assertEquals(1, h.numProcessingTimeTimers(), "the promotion held for 08:00");
        h.setProcessingTime(NOV_22_23H30);
        h.processElement(message("m-000412", NOV_22_23H30, "price-alert", 80), NOV_22_23H30);

        List<JsonNode> audits = audits(h);
        assertEquals(1, audits.size(), audits.toString());
        assertEquals("PREEMPTED", audits.get(0).get("decision").asText(), audits.toString());
        h.setProcessingTime(NOV_23_8H);
        Delivery alert = deliveries(h).get(deliveries(h).size() - 1);
        assertTrue(new String(alert.value()).contains("m-000412"));
        assertEquals(NOV_23_8H, alert.sendAt());
        assertEquals("REJECTED", alert.shadow(), "the shadow rule found 08:00 taken");
    }

    @Test
    void aPriceAlertTakesTheMorningSlotFromAPromotionAcrossARestore() throws Exception {
        var h = promotionHeld(PRIORITY_CONFIG);
        h.setProcessingTime(NOV_22_23H30);
        MirrorModel redis = new MirrorModel().apply(h);
        h.processElement(message("m-000412", NOV_22_23H30, "price-alert", 80), NOV_22_23H30);

        List<JsonNode> audits = audits(h);
        assertEquals(1, audits.size(), audits.toString());
        assertEquals(Json.MAPPER.readTree(AUDIT_PREEMPTED), audits.get(0));
        // Redis: the promotion left the log and the alert is counted at 08:00, in one write.
        assertEquals(
                List.of(pushEntry(NOV_22_10H, "m-000390"), pushEntry(NOV_23_8H, "m-000400")),
                redis.entries(42),
                "before the alert: the promotion counted at 08:00");
        int writes = redis.writes();
        redis.apply(h);
        assertEquals(writes + 1, redis.writes());
        assertEquals(
                List.of(pushEntry(NOV_22_10H, "m-000390"), pushEntry(NOV_23_8H, "m-000412")),
                redis.entries(42));
        assertEquals(
                NOV_23_8H + LimitConfig.parse(PRIORITY_CONFIG).longestWindowMillis(),
                redis.key(42).expireAt());

        // A checkpoint now has the alert held and the promotion gone: restored, only the alert
        // goes out at 08:00, once.
        OperatorSubtaskState snapshot = h.snapshot(1, NOV_22_23H30);
        harnesses.close(h);
        var restored = harnesses.openWithMirror(PRIORITY_CONFIG, snapshot);
        restored.setProcessingTime(NOV_23_8H);
        List<Delivery> out = deliveries(restored);
        assertEquals(1, out.size());
        assertEquals(NOV_23_8H, out.get(0).sendAt());
        assertTrue(new String(out.get(0).value()).contains("m-000412"));
        assertEquals(0, heldNow(restored));
        assertEquals(0, restored.numProcessingTimeTimers());
        // The promotion's messageId is free again: sent anew, it is decided, not a DUPLICATE.
        long nov23noon = NOV_23_8H + 4 * 3_600_000L;
        restored.setProcessingTime(nov23noon);
        restored.processElement(promotion(), nov23noon);
        assertEquals("REJECTED", audits(restored).get(0).get("decision").asText());
    }

    /**
     * The contract's story (§6, {@code examples/limit-config-priority.json}) with the day's message
     * m-000371 at 09:15: user 42's Redis key is then {@code examples/redis-log.json} byte for byte
     * (§7), the promotion out of it, the alert in it at its send time.
     */
    @Test
    void theContractsStoryLeavesTheContractsRedisLog() throws Exception {
        String config =
                new String(
                        SharedFiles.read("contract/examples/limit-config-priority.json"),
                        StandardCharsets.UTF_8);
        var h = harnesses.openWithMirror(config, null);
        MirrorModel redis = new MirrorModel();
        long nov22at0915 = Instant.parse("2025-11-22T08:15:00Z").toEpochMilli();
        h.setProcessingTime(nov22at0915);
        h.processElement(message("m-000371", nov22at0915, null, 0), nov22at0915);
        h.setProcessingTime(NOV_22_22H10);
        h.processElement(promotion(), NOV_22_22H10);
        redis.apply(h);
        assertEquals(List.of("m-000371", "m-000400"), redis.ids(42));
        h.setProcessingTime(NOV_22_23H30);
        h.processElement(message("m-000412", NOV_22_23H30, null, 80), NOV_22_23H30);
        assertEquals("PREEMPTED", audits(h).get(0).get("decision").asText());
        redis.apply(h);
        assertEquals(
                new String(
                                SharedFiles.read("contract/examples/redis-log.json"),
                                StandardCharsets.UTF_8)
                        .strip(),
                redis.key(42).value());
    }

    @Test
    void aMessageAlreadySentIsNeverTakenBack() throws Exception {
        var h = promotionHeld(PRIORITY_CONFIG);
        // The promotion went out at 08:00; the alert comes at 08:30 the same day.
        h.setProcessingTime(NOV_23_8H);
        assertEquals(2, deliveries(h).size());
        long later = NOV_23_8H + 30 * 60_000L;
        h.setProcessingTime(later);
        h.processElement(message("m-000412", later, "price-alert", 80), later);
        assertEquals("REJECTED", audits(h).get(0).get("decision").asText());
        assertEquals(1, audits(h).size());
    }

    @Test
    void equalPriorityOrARuleWithoutPreemptTakesNothing() throws Exception {
        var h = promotionHeld(PRIORITY_CONFIG);
        h.setProcessingTime(NOV_22_23H30);
        h.processElement(message("m-000412", NOV_22_23H30, "price-alert", 10), NOV_22_23H30);
        assertEquals("REJECTED", audits(h).get(0).get("decision").asText());

        var without = promotionHeld(PRIORITY_CONFIG.replace(",\"preempt\":true", ""));
        without.setProcessingTime(NOV_22_23H30);
        without.processElement(message("m-000412", NOV_22_23H30, "price-alert", 80), NOV_22_23H30);
        List<JsonNode> audits = audits(without);
        assertEquals(1, audits.size());
        assertEquals("REJECTED", audits.get(0).get("decision").asText());
        without.setProcessingTime(NOV_23_8H);
        assertEquals(2, deliveries(without).size(), "the promotion goes out as held");
    }

    @Test
    void shadowRulesNeverPreempt() throws Exception {
        String rule =
                "{\"segment\":\"*\",\"limits\":[{\"calendar\":\"day\",\"max\":1}],"
                        + "\"hold\":\"12h\",\"quietHours\":{\"from\":\"21:00\",\"to\":\"08:00\"}";
        String config =
                "{\"version\":11,\"timezone\":\"Europe/Berlin\",\"rules\":["
                        + rule
                        + "}],\"shadow\":{\"rules\":["
                        + rule
                        + ",\"preempt\":true}]}}";
        var h = promotionHeld(config);
        h.setProcessingTime(NOV_22_23H30);
        h.processElement(message("m-000412", NOV_22_23H30, "price-alert", 80), NOV_22_23H30);
        List<JsonNode> audits = audits(h);
        assertEquals(1, audits.size());
        assertEquals("REJECTED", audits.get(0).get("decision").asText());
        assertEquals("REJECTED", audits.get(0).get("shadow").get("decision").asText());
        h.setProcessingTime(NOV_23_8H);
        assertEquals(2, deliveries(h).size(), "the promotion goes out as held");
    }

    /**
     * Among held messages of one priority and send time, the most recently decided gives way first,
     * also when it was held after a rescale by a task that did not hold the earlier one: every task
     * numbers what it holds after the highest number any task had reached.
     */
    @Test
    void theMostRecentlyDecidedGivesWayFirstAlsoAfterARescale() throws Exception {
        String twoADay =
                PRIORITY_CONFIG.replace(
                        "{\"calendar\":\"day\",\"max\":1}],\"campaigns\"",
                        "{\"calendar\":\"day\",\"max\":2}],\"campaigns\"");
        int owner = KeyGroupRangeAssignment.assignKeyToParallelOperator(42L, 128, 2);
        List<OperatorSubtaskState> snapshots = new ArrayList<>();
        for (int subtask = 0; subtask < 2; subtask++) {
            var h = harnesses.open(CappingSettings.of(twoADay), null, 2, subtask);
            h.setProcessingTime(NOV_22_22H10);
            if (subtask == owner) {
                h.processElement(message("m-a", NOV_22_22H10, null, 10), NOV_22_22H10);
            } else {
                // the other task holds more messages, of its own users
                int held = 0;
                for (long user = 1000; held < 5; user++) {
                    if (KeyGroupRangeAssignment.assignKeyToParallelOperator(user, 128, 2)
                            == subtask) {
                        h.processElement(
                                Records.message("o-" + user, user, NOV_22_22H10)
                                        .timezone("Europe/Berlin")
                                        .inbound(harnesses.nextOffset()),
                                NOV_22_22H10);
                        held++;
                    }
                }
            }
            assertEquals(0, deliveries(h).size(), "all held for the morning");
            snapshots.add(h.snapshot(1, NOV_22_22H10));
            harnesses.close(h);
        }
        OperatorSubtaskState restore = CappingHarnesses.rescaled(snapshots, 1, 0);
        var h = harnesses.open(CappingSettings.of(twoADay), restore, 1, 0);
        long at2220 = NOV_22_22H10 + 10 * 60_000L;
        h.setProcessingTime(at2220);
        h.processElement(message("m-b", at2220, null, 10), at2220); // 08:00 too: the day is full
        h.setProcessingTime(NOV_22_23H30);
        h.processElement(message("m-000412", NOV_22_23H30, null, 80), NOV_22_23H30);
        List<JsonNode> audits = audits(h);
        assertEquals(1, audits.size(), audits.toString());
        assertEquals("PREEMPTED", audits.get(0).get("decision").asText(), audits.toString());
        assertEquals("m-b", audits.get(0).get("messageId").asText(), "decided last, after m-a");
        h.setProcessingTime(NOV_23_8H);
        assertEquals(7, deliveries(h).size(), "m-a, the alert, the other task's five");
    }
}
