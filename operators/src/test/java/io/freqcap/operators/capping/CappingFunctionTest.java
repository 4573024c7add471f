package io.freqcap.operators.capping;

import static io.freqcap.operators.capping.CappingFixtures.auditDecisions;
import static io.freqcap.operators.capping.CappingFixtures.dailyConfig;
import static io.freqcap.operators.capping.CappingFixtures.history;
import static io.freqcap.operators.capping.CappingHarnesses.audits;
import static io.freqcap.schema.Instants.DAY;
import static io.freqcap.schema.Instants.DAY_1_NOON;
import static io.freqcap.schema.Instants.HOUR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.Records;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

public class CappingFunctionTest {
    static final String ONE_A_DAY_V1 = dailyConfig(1, 1);

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> harness(
            String initialConfig, OperatorSubtaskState restoreFrom, int parallelism, int subtask)
            throws Exception {
        return harnesses.open(CappingSettings.of(initialConfig), restoreFrom, parallelism, subtask);
    }

    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> harness(
            String initialConfig) throws Exception {
        return harness(initialConfig, null, 1, 0);
    }

    InboundMessage message(String id, long userId, String category, long t, byte[] key) {
        return Records.message(id, userId, t)
                .category(category)
                .key(key)
                .inbound(harnesses.nextOffset());
    }

    InboundMessage message(String id, long userId, long t) {
        return Records.message(id, userId, t).inbound(harnesses.nextOffset());
    }

    static ControlRecord control(String json) {
        return Records.config(json);
    }

    static List<String> decisions(KeyedBroadcastOperatorTestHarness<?, ?, ?, Delivery> h) {
        List<String> out = new ArrayList<>();
        for (Delivery d : h.extractOutputValues()) {
            out.add(d.decision() + "@v" + d.configVersion());
        }
        return out;
    }

    @Test
    void allowedGoesOutByteForByteWithHeaders() throws Exception {
        var h = harness(ONE_A_DAY_V1);
        InboundMessage m = message("m1", 42, "marketing", DAY_1_NOON, "k42".getBytes());
        h.processElement(m, DAY_1_NOON);

        Delivery d = h.extractOutputValues().get(0);
        assertEquals(new String(m.value()), new String(d.value()));
        assertEquals("k42", new String(d.key()));
        assertEquals("ALLOWED", d.decision());
        assertEquals("*", d.segment());
        assertEquals(1, d.configVersion());
    }

    @Test
    void deliveryKeyIsTheUserIdWhenTheInputHadNone() throws Exception {
        var h = harness(ONE_A_DAY_V1);
        h.processElement(message("m1", 42, DAY_1_NOON), DAY_1_NOON);
        assertEquals("42", new String(h.extractOutputValues().get(0).key()));
    }

    @Test
    void rejectedGoesToAuditWithViolations() throws Exception {
        var h = harness(ONE_A_DAY_V1);
        h.processElement(message("m1", 42, DAY_1_NOON), DAY_1_NOON);
        h.processElement(message("m2", 42, DAY_1_NOON + HOUR), DAY_1_NOON + HOUR);

        JsonNode a = audits(h).get(0);
        assertEquals("REJECTED", a.get("decision").asText());
        assertEquals(42, a.get("userId").asLong());
        assertEquals("1d", a.get("violations").get(0).get("window").asText());
        assertEquals(DAY_1_NOON + DAY, a.get("retryAfter").asLong());
        assertEquals("m2", a.get("message").get("messageId").asText());
        assertEquals("hi", a.get("message").get("payload").get("title").asText());
    }

    @Test
    void shadowRulesAreReportedAndNeverEnforced() throws Exception {
        String config =
                "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                        + "[{\"window\":\"1d\",\"max\":2}]}],"
                        + "\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":"
                        + "[{\"window\":\"1d\",\"max\":1}]}]},"
                        + "\"exempt\":[\"transactional\"]}";
        var h = harness(config);
        h.processElement(message("m1", 42, DAY_1_NOON), DAY_1_NOON);
        h.processElement(message("m2", 42, DAY_1_NOON + 1), DAY_1_NOON + 1);
        h.processElement(message("m3", 42, DAY_1_NOON + 2), DAY_1_NOON + 2);
        h.processElement(message("t1", 42, "transactional", DAY_1_NOON + 3, null), DAY_1_NOON + 3);

        List<Delivery> out = h.extractOutputValues();
        assertEquals("ALLOWED", out.get(0).shadow(), "the shadow would have allowed the first");
        assertEquals("REJECTED", out.get(1).shadow(), "allowed, though the shadow would not");
        assertEquals("EXEMPT", out.get(2).decision());
        assertNull(out.get(2).shadow(), "exempt deliveries carry no shadow");
        JsonNode rejected = audits(h).get(0);
        assertEquals("REJECTED", rejected.get("decision").asText());
        JsonNode shadow = rejected.get("shadow");
        assertEquals("REJECTED", shadow.get("decision").asText());
        assertEquals("*", shadow.get("segment").asText());
        assertEquals(2, shadow.get("violations").get(0).get("count").asInt());
        assertEquals(1, shadow.get("violations").get(0).get("max").asInt());
    }

    @Test
    void exemptPassesUncounted() throws Exception {
        var h = harness(ONE_A_DAY_V1);
        h.processElement(message("t1", 42, "transactional", DAY_1_NOON, null), DAY_1_NOON);
        h.processElement(message("m1", 42, DAY_1_NOON), DAY_1_NOON);
        assertEquals(List.of("EXEMPT@v1", "ALLOWED@v1"), decisions(h));
    }

    @Test
    void malformedIsAuditedWithItsSource() throws Exception {
        var h = harness(ONE_A_DAY_V1);
        h.processElement(
                InboundMessage.of(
                        new RawRecord(null, "{\"userId\":\"abc\"}".getBytes(), "in", 3, 1287)),
                0);
        JsonNode a = audits(h).get(0);
        assertEquals("MALFORMED", a.get("decision").asText());
        assertEquals("userId: expected an integer, got \"abc\"", a.get("error").asText());
        assertEquals(1287, a.get("source").get("offset").asLong());
        assertEquals(3, a.get("source").get("partition").asInt());
    }

    @Test
    void configUpdateIsAppliedToLaterMessages() throws Exception {
        var h = harness(ONE_A_DAY_V1);
        h.processElement(message("m1", 42, DAY_1_NOON), DAY_1_NOON);
        h.processElement(message("m2", 42, DAY_1_NOON + 1), DAY_1_NOON + 1);
        h.processBroadcastElement(control(dailyConfig(2, 3)), 0);
        h.processElement(message("m3", 42, DAY_1_NOON + 2), DAY_1_NOON + 2);

        assertEquals(List.of("ALLOWED@v1", "ALLOWED@v2"), decisions(h));
        assertEquals(1, audits(h).size()); // m2 under version 1
    }

    @Test
    void invalidConfigIsAuditedAndTheOldOneStays() throws Exception {
        var h = harness(ONE_A_DAY_V1);
        String noStarRule =
                "{\"version\":5,\"rules\":[{\"segment\":\"new\",\"limits\":[{\"window\":\"1d\",\"max\":9}]}]}";
        h.processBroadcastElement(control(noStarRule), 0);
        h.processElement(message("m1", 42, DAY_1_NOON), DAY_1_NOON);
        h.processElement(message("m2", 42, DAY_1_NOON + 1), DAY_1_NOON + 1);

        JsonNode a = audits(h).get(0);
        assertEquals("INVALID_CONTROL", a.get("decision").asText());
        assertTrue(a.get("error").asText().contains("segment \"*\""), a.toString());
        assertEquals(
                noStarRule,
                new String(java.util.Base64.getDecoder().decode(a.get("raw").asText())));
        assertEquals("limit-config", a.get("source").get("topic").asText());
        assertEquals(List.of("ALLOWED@v1"), decisions(h));
        assertEquals("REJECTED", audits(h).get(1).get("decision").asText());
    }

    @Test
    void staleConfigVersionIsAuditedAndIgnored() throws Exception {
        var h = harness(dailyConfig(4, 1));
        h.processBroadcastElement(control(dailyConfig(4, 9)), 0);
        h.processBroadcastElement(control(dailyConfig(3, 9)), 0);
        h.processElement(message("m1", 42, DAY_1_NOON), DAY_1_NOON);
        h.processElement(message("m2", 42, DAY_1_NOON + 1), DAY_1_NOON + 1);

        List<JsonNode> a = audits(h);
        assertTrue(a.get(0).get("error").asText().startsWith("stale version"), a.get(0).toString());
        assertTrue(a.get(1).get("error").asText().startsWith("stale version"), a.get(1).toString());
        assertEquals("REJECTED", a.get(2).get("decision").asText());
        assertEquals(4, a.get(2).get("configVersion").asLong());
    }

    @Test
    void unknownCommandIsInvalidControl() throws Exception {
        var h = harness(ONE_A_DAY_V1);
        h.processBroadcastElement(control("{\"command\":\"drop-everything\"}"), 0);
        h.processBroadcastElement(control("{\"command\":\"rebuild-mirror\"}"), 0);
        List<JsonNode> a = audits(h);
        assertEquals(1, a.size());
        assertEquals("unknown command \"drop-everything\"", a.get(0).get("error").asText());
    }

    @Test
    void onlyTheFirstParallelInstanceAuditsControlRecords() throws Exception {
        var second = harness(ONE_A_DAY_V1, null, 2, 1);
        second.processBroadcastElement(control("not json"), 0);
        assertTrue(audits(second).isEmpty());
        var first = harness(ONE_A_DAY_V1, null, 2, 0);
        first.processBroadcastElement(control("not json"), 0);
        assertEquals(1, audits(first).size());
    }

    @Test
    void sweepClearsHistoriesTwiceTheLongestWindowBehindTheWatermark() throws Exception {
        var h = harness(ONE_A_DAY_V1);
        h.processElement(message("m1", 42, DAY_1_NOON), DAY_1_NOON);
        h.processElement(message("m2", 43, DAY_1_NOON + 3 * DAY), DAY_1_NOON + 3 * DAY);
        assertEquals(0, h.numEventTimeTimers(), "no timer per user");

        h.watermark(DAY_1_NOON + 14 * DAY - 1);
        h.processBroadcastElement(ControlRecord.sweep(1), 0);
        assertEquals(1, history(h, 42).size());

        h.watermark(DAY_1_NOON + 14 * DAY);
        h.processBroadcastElement(ControlRecord.sweep(2), 0);
        assertNull(history(h, 42));
        assertEquals(1, history(h, 43).size(), "a user with later messages is kept");
        assertTrue(audits(h).isEmpty(), "a sweep is not a control record to audit");

        // Cleared means forgotten: the same messageId counts again.
        h.processElement(message("m1", 42, DAY_1_NOON + 15 * DAY), DAY_1_NOON + 15 * DAY);
        assertEquals(List.of("ALLOWED@v1", "ALLOWED@v1", "ALLOWED@v1"), decisions(h));
    }

    @Test
    void aMessageThatCouldShareAWindowWithASweptHistoryIsStaleAlsoAfterARestore() throws Exception {
        var h = harness(ONE_A_DAY_V1);
        h.processElement(message("m1", 42, DAY_1_NOON), DAY_1_NOON);
        h.watermark(DAY_1_NOON + 14 * DAY);
        h.processBroadcastElement(ControlRecord.sweep(1), 0);
        assertNull(history(h, 42));

        // A partition waking up with a day-old backlog: user 42's cleared message is 2 days
        // before it, within the 7-day window. Deciding it on an empty history could over-admit.
        h.processElement(message("m2", 42, DAY_1_NOON + 2 * DAY), DAY_1_NOON + 2 * DAY);
        h.processElement(message("m3", 7, DAY_1_NOON + 6 * DAY), DAY_1_NOON + 6 * DAY);
        assertEquals(List.of("STALE", "STALE"), auditDecisions(h));
        assertTrue(audits(h).get(0).get("reason").asText().contains("cleared histories"));

        OperatorSubtaskState snapshot = h.snapshot(1, 1);
        harnesses.close(h);
        // Restored at another parallelism, each instance keeps the highest horizon.
        for (int subtask = 0; subtask < 2; subtask++) {
            var restored = harness(ONE_A_DAY_V1, snapshot, 2, subtask);
            long user = 42;
            while (org.apache.flink.runtime.state.KeyGroupRangeAssignment
                            .assignKeyToParallelOperator(user, 128, 2)
                    != subtask) {
                user++;
            }
            restored.processElement(
                    message("m4", user, DAY_1_NOON + 7 * DAY - 1), DAY_1_NOON + 7 * DAY - 1);
            restored.processElement(
                    message("m5", user, DAY_1_NOON + 7 * DAY), DAY_1_NOON + 7 * DAY);
            assertEquals(List.of("STALE"), auditDecisions(restored), "subtask " + subtask);
            assertEquals(List.of("ALLOWED@v1"), decisions(restored), "past the horizon");
        }
    }

    @Test
    void sweepBeforeAnyWatermarkKeepsEverything() throws Exception {
        var h = harness(ONE_A_DAY_V1);
        h.processElement(message("m1", 42, DAY_1_NOON), DAY_1_NOON);
        h.processBroadcastElement(ControlRecord.sweep(1), 0);
        assertEquals(1, history(h, 42).size());
    }

    @Test
    void sweepUsesTheLongestWindowInForce() throws Exception {
        var h = harness(ONE_A_DAY_V1);
        h.processElement(message("m1", 42, DAY_1_NOON), DAY_1_NOON);
        String thirtyDays =
                "{\"version\":2,\"rules\":[{\"segment\":\"*\",\"limits\":"
                        + "[{\"window\":\"30d\",\"max\":9}]}]}";
        h.processBroadcastElement(control(thirtyDays), 0);
        h.watermark(DAY_1_NOON + 20 * DAY);
        h.processBroadcastElement(ControlRecord.sweep(1), 0);
        assertEquals(1, history(h, 42).size(), "needed for 60 days under a 30-day window");
        h.watermark(DAY_1_NOON + 60 * DAY);
        h.processBroadcastElement(ControlRecord.sweep(2), 0);
        assertNull(history(h, 42));
    }

    @Test
    void snapshotAndRestoreKeepDecisionsIdentical() throws Exception {
        List<InboundMessage> first = new ArrayList<>();
        List<InboundMessage> second = new ArrayList<>();
        java.util.Random rnd = new java.util.Random(11);
        for (int i = 0; i < 400; i++) {
            long t = DAY_1_NOON + i * HOUR + rnd.nextInt(5) * DAY - 2 * DAY;
            (i < 200 ? first : second).add(message("m" + rnd.nextInt(350), rnd.nextInt(20), t));
        }
        ControlRecord update = control(dailyConfig(2, 2));

        var straight = harness(ONE_A_DAY_V1);
        for (InboundMessage m : first) {
            straight.processElement(m, m.timestamp());
        }
        straight.processBroadcastElement(update, 0);
        for (InboundMessage m : second) {
            straight.processElement(m, m.timestamp());
        }

        var before = harness(ONE_A_DAY_V1);
        for (InboundMessage m : first) {
            before.processElement(m, m.timestamp());
        }
        before.processBroadcastElement(update, 0);
        OperatorSubtaskState snapshot = before.snapshot(1, 1);
        // Restarted with the older initial config: the version 2 from the topic must stay.
        var after = harness(ONE_A_DAY_V1, snapshot, 1, 0);
        for (InboundMessage m : second) {
            after.processElement(m, m.timestamp());
        }

        List<String> expected = decisions(straight);
        List<String> got = new ArrayList<>(decisions(before));
        got.addAll(decisions(after));
        assertEquals(expected, got);
        List<String> expectedAudits = new ArrayList<>();
        audits(straight).forEach(a -> expectedAudits.add(a.toString()));
        List<String> gotAudits = new ArrayList<>();
        audits(before).forEach(a -> gotAudits.add(a.toString()));
        audits(after).forEach(a -> gotAudits.add(a.toString()));
        assertEquals(expectedAudits, gotAudits);
        assertTrue(decisions(after).stream().allMatch(d -> d.endsWith("@v2")));
        assertTrue(gotAudits.stream().anyMatch(a -> a.contains("DUPLICATE")));
        assertTrue(gotAudits.stream().anyMatch(a -> a.contains("REJECTED")));
    }

    /** Decisions and audit records of one run, in order, with a snapshot/restore halfway. */
    private List<String> runWithHistoryCache(int slots, List<Object> inputs) throws Exception {
        List<String> out = new ArrayList<>();
        var h =
                harnesses.open(
                        CappingSettings.of(ONE_A_DAY_V1).withHistoryCache(slots), null, 1, 0);
        int half = inputs.size() / 2;
        for (int i = 0; i < inputs.size(); i++) {
            if (i == half) {
                out.addAll(decisions(h));
                audits(h).forEach(a -> out.add(a.toString()));
                OperatorSubtaskState snapshot = h.snapshot(1, 1);
                harnesses.close(h);
                h =
                        harnesses.open(
                                CappingSettings.of(ONE_A_DAY_V1).withHistoryCache(slots),
                                snapshot,
                                1,
                                0);
            }
            Object in = inputs.get(i);
            if (in instanceof InboundMessage m) {
                h.processElement(m, m.timestamp());
            } else if (in instanceof Long watermark) {
                h.watermark(watermark);
            } else {
                h.processBroadcastElement((ControlRecord) in, 0);
            }
        }
        out.addAll(decisions(h));
        audits(h).forEach(a -> out.add(a.toString()));
        return out;
    }

    @Test
    void historyCacheNeverChangesADecision() throws Exception {
        // Users come back after others took their cache slot, after a sweep cleared them (their
        // messageIds count again), after a config update and after a restore.
        java.util.Random rnd = new java.util.Random(23);
        List<Object> inputs = new ArrayList<>();
        long t = DAY_1_NOON;
        for (int i = 0; i < 3_000; i++) {
            if (i % 500 == 499) {
                t += 15 * DAY; // past 2 x the longest window: the sweep clears everyone older
                inputs.add(t - 1);
                inputs.add(ControlRecord.sweep(i));
            }
            if (i == 1_200) {
                inputs.add(control(dailyConfig(2, 2)));
            }
            long when = t + rnd.nextInt(72) * HOUR - 24 * HOUR;
            inputs.add(message("m" + rnd.nextInt(40), rnd.nextInt(50), when));
            t += 20 * 60_000L;
        }
        List<String> uncached = runWithHistoryCache(0, inputs);
        assertTrue(uncached.stream().filter(d -> d.startsWith("ALLOWED")).count() > 300);
        assertTrue(uncached.stream().anyMatch(a -> a.contains("DUPLICATE")));
        assertTrue(uncached.stream().anyMatch(a -> a.contains("REJECTED")));
        assertEquals(uncached, runWithHistoryCache(4, inputs), "4 slots: users evict each other");
        assertEquals(uncached, runWithHistoryCache(1 << 16, inputs), "every user cached");
    }

    @Test
    void outsideItsOperatorTheFunctionRefusesToOpen() {
        // Flink's plain keyed-broadcast operator cannot switch keys for the function, which keeps
        // new histories in memory until the next checkpoint: one clear line, not a silent other
        // mode.
        IllegalStateException e =
                assertThrows(
                        IllegalStateException.class,
                        () ->
                                ProcessFunctionTestHarnesses.forKeyedBroadcastProcessFunction(
                                        new CappingFunction(CappingSettings.of(ONE_A_DAY_V1)),
                                        InboundMessage::routingKey,
                                        Types.LONG));
        assertTrue(e.getMessage().contains("CappingOperator"), e.getMessage());
    }
}
