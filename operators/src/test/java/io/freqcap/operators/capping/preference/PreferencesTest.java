package io.freqcap.operators.capping.preference;

import static io.freqcap.operators.capping.CappingFixtures.NOV_22_10H;
import static io.freqcap.operators.capping.CappingFixtures.NOV_23_8H;
import static io.freqcap.operators.capping.CappingFixtures.PRIORITY_CONFIG;
import static io.freqcap.operators.capping.CappingFixtures.assertViolations;
import static io.freqcap.operators.capping.CappingFixtures.firstAudit;
import static io.freqcap.operators.capping.CappingHarnesses.audits;
import static io.freqcap.operators.capping.CappingHarnesses.deliveries;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.capping.CappingFixtures;
import io.freqcap.operators.capping.CappingHarnesses;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.capping.MirrorModel;
import io.freqcap.schema.Records;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.mirror.MirrorLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The user's own say (contract.md §10) and the sender's word (§11) in the capping operator on
 * RocksDB with the Redis mirror: opt-outs, pauses and the user's limits decide with the rules; an
 * opt-out or a pause cancels what is held; a failed receipt frees the message's place and id;
 * preferences survive a restore and a rescale; bad records are INVALID_CONTROL.
 */
public class PreferencesTest {
    /** One message a day, not held. */
    static final String ONE_A_DAY =
            "{\"version\":3,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\","
                    + "\"max\":1}]}],\"exempt\":[\"transactional\"]}";

    static final long NOV_22_22H20 = Instant.parse("2025-11-22T21:20:00Z").toEpochMilli();
    static final long NOV_22_23H = Instant.parse("2025-11-22T22:00:00Z").toEpochMilli();
    static final long DEC_2 = 1764633600000L; // the contract's pausedUntil

    /** {@code examples/audit-cancelled.json}. */
    static final String AUDIT_CANCELLED =
            "{\"decision\":\"CANCELLED\",\"messageId\":\"m-000388\",\"userId\":42,"
                    + "\"segment\":\"*\",\"channel\":\"sms\",\"timestamp\":1763846400000,"
                    + "\"configVersion\":11,\"sendAt\":1763881200000,"
                    + "\"reason\":\"opted out of channel sms\","
                    + "\"message\":{\"messageId\":\"m-000388\",\"userId\":42,\"channel\":\"sms\","
                    + "\"timestamp\":1763846400000,\"timezone\":\"Europe/Berlin\"}}";

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    InboundMessage preference(String json) {
        return Records.preference(42L, json, harnesses.nextOffset());
    }

    InboundMessage message(String id, long t, String channel) {
        return Records.message(id, 42, t)
                .channel(channel)
                .timezone("Europe/Berlin")
                .inbound(harnesses.nextOffset());
    }

    static String decision(JsonNode audit) {
        return audit.get("decision").asText();
    }

    /** The contract's config with the mirror, at 22:20 in Berlin: m-1 held for 08:00. */
    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> m1Held()
            throws Exception {
        var h = harnesses.openWithMirror(PRIORITY_CONFIG, null);
        h.setProcessingTime(NOV_22_22H20);
        h.processElement(message("m-1", NOV_22_22H20, "push"), NOV_22_22H20);
        return h;
    }

    /** {@link #m1Held}, then a failed receipt of m-1 while it waits: it still goes out at 08:00. */
    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery>
            m1FailedWhileHeld() throws Exception {
        var h = m1Held();
        h.processElement(Records.failed("m-1", 42, harnesses.nextOffset()), NOV_22_22H20);
        h.setProcessingTime(NOV_23_8H);
        assertEquals(1, deliveries(h).size(), "still sent at 08:00");
        return h;
    }

    @Test
    void anOptOutRejectsItsChannelWithoutRetryAndLeavesTheOthers() throws Exception {
        var h = harnesses.openWithMirror(ONE_A_DAY, null);
        h.processElement(
                preference("{\"userId\":42,\"version\":1,\"optOut\":{\"channels\":[\"sms\"]}}"), 0);
        h.processElement(message("m-1", NOV_22_10H, "sms"), NOV_22_10H);
        h.processElement(message("m-2", NOV_22_10H + 1, "email"), NOV_22_10H);
        List<JsonNode> audits = audits(h);
        assertEquals(1, audits.size(), audits.toString());
        JsonNode a = audits.get(0);
        assertEquals("REJECTED", decision(a));
        assertViolations("[{\"scope\":\"preference:opt-out\",\"channel\":\"sms\"}]", a);
        assertTrue(a.get("retryAfter").isNull(), "an opt-out never passes by waiting");
        assertEquals(1, deliveries(h).size(), "the email is not the sms");
        // An exempt message ignores preferences.
        h.processElement(
                Records.message("m-3", 42, NOV_22_10H + 2)
                        .channel("sms")
                        .category("transactional")
                        .inbound(harnesses.nextOffset()),
                NOV_22_10H);
        assertEquals(2, deliveries(h).size());
    }

    @Test
    void aHeldSmsIsCancelledByAnOptOutAsTheContractShows() throws Exception {
        var h = harnesses.openWithMirror(PRIORITY_CONFIG, null);
        h.setProcessingTime(NOV_22_22H20);
        h.processElement(
                Records.inbound(
                        ("{\"messageId\": \"m-000388\", \"userId\": 42, \"channel\": \"sms\","
                                        + " \"timestamp\": 1763846400000, \"timezone\":"
                                        + " \"Europe/Berlin\"}")
                                .getBytes(StandardCharsets.UTF_8)),
                NOV_22_22H20);
        assertEquals(1, h.numProcessingTimeTimers(), "held for 08:00");
        MirrorModel redis = new MirrorModel().apply(h);
        assertEquals(List.of("m-000388"), redis.ids(42), "counted at once");
        h.setProcessingTime(NOV_22_23H);
        h.processElement(
                preference("{\"userId\":42,\"version\":3,\"optOut\":{\"channels\":[\"sms\"]}}"),
                NOV_22_23H);

        List<JsonNode> audits = audits(h);
        assertEquals(1, audits.size(), audits.toString());
        assertEquals(Json.MAPPER.readTree(AUDIT_CANCELLED), audits.get(0));
        redis.apply(h);
        assertNull(redis.key(42), "the cancelled sms was all 42 counted: its key deleted");
        assertEquals(0, h.numProcessingTimeTimers());
        h.setProcessingTime(NOV_23_8H);
        assertEquals(0, deliveries(h).size(), "nothing goes out at 08:00");
        // The place is free: a push at 09:00 goes out.
        long nine = NOV_23_8H + 3_600_000L;
        h.setProcessingTime(nine);
        h.processElement(message("m-000390", nine, "push"), nine);
        assertEquals(1, deliveries(h).size());
    }

    @Test
    void aPauseHoldsWhereTheRuleHoldsAndRejectsWhereItDoesNot() throws Exception {
        long pausedUntil = NOV_22_10H + 3 * 3_600_000L; // 13:00 Berlin
        String pause = "{\"userId\":42,\"version\":1,\"pausedUntil\":" + pausedUntil + "}";
        var holds = harnesses.openWithMirror(PRIORITY_CONFIG, null);
        holds.setProcessingTime(NOV_22_10H);
        holds.processElement(preference(pause), NOV_22_10H);
        holds.processElement(message("m-1", NOV_22_10H, "push"), NOV_22_10H);
        assertEquals(0, deliveries(holds).size());
        holds.setProcessingTime(pausedUntil);
        List<Delivery> out = deliveries(holds);
        assertEquals(1, out.size(), "held through the pause");
        assertEquals(pausedUntil, out.get(0).sendAt());

        var rejects = harnesses.openWithMirror(ONE_A_DAY, null);
        rejects.processElement(preference(pause), NOV_22_10H);
        rejects.processElement(message("m-1", NOV_22_10H, "push"), NOV_22_10H);
        JsonNode a = audits(rejects).get(0);
        assertEquals("REJECTED", decision(a));
        assertViolations("[{\"scope\":\"preference:paused\",\"until\":" + pausedUntil + "}]", a);
        assertEquals(pausedUntil, a.get("retryAfter").asLong());
    }

    @Test
    void aPausePastAHeldMessagesSendTimeCancelsIt() throws Exception {
        var h = m1Held();
        h.processElement(
                preference("{\"userId\":42,\"version\":1,\"pausedUntil\":" + DEC_2 + "}"),
                NOV_22_22H20);
        List<JsonNode> audits = audits(h);
        assertEquals(1, audits.size(), audits.toString());
        assertEquals("CANCELLED", decision(audits.get(0)));
        assertEquals("paused until 2025-12-02T00:00:00Z", audits.get(0).get("reason").asText());
        // A pause that ends before a held message's send time leaves it be.
        var kept = m1Held();
        kept.processElement(
                preference("{\"userId\":42,\"version\":1,\"pausedUntil\":" + NOV_22_23H + "}"),
                NOV_22_22H20);
        assertEquals(0, audits(kept).size());
        kept.setProcessingTime(NOV_23_8H);
        assertEquals(1, deliveries(kept).size());
    }

    @Test
    void theUsersOwnLimitsAreCheckedWithTheRulesAndReportedAsPreferences() throws Exception {
        String loose =
                "{\"version\":3,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\","
                        + "\"max\":10}]}]}";
        var h = harnesses.openWithMirror(loose, null);
        h.processElement(
                preference(
                        "{\"userId\":42,\"version\":1,\"channels\":{\"email\":[{\"window\":\"7d\","
                                + "\"max\":1}]}}"),
                0);
        h.processElement(message("m-1", NOV_22_10H, "email"), NOV_22_10H);
        h.processElement(message("m-2", NOV_22_10H + 60_000, "email"), NOV_22_10H);
        h.processElement(message("m-3", NOV_22_10H + 120_000, "push"), NOV_22_10H);
        assertEquals(2, deliveries(h).size());
        JsonNode a = firstAudit(h, "m-2");
        assertViolations(
                "[{\"scope\":\"preference:channel:email\",\"window\":\"7d\",\"max\":1,"
                        + "\"count\":1}]",
                a);
        assertEquals(NOV_22_10H + 7 * 86_400_000L, a.get("retryAfter").asLong());
    }

    @Test
    void versionsOnlyGrowAndATombstoneClears() throws Exception {
        var h = harnesses.openWithMirror(ONE_A_DAY, null);
        h.processElement(
                preference("{\"userId\":42,\"version\":2,\"optOut\":{\"channels\":[\"sms\"]}}"), 0);
        h.processElement(preference("{\"userId\":42,\"version\":2}"), 0); // not greater
        h.processElement(preference("{\"userId\":42,\"version\":1}"), 0);
        h.processElement(message("m-1", NOV_22_10H, "sms"), NOV_22_10H);
        assertEquals("REJECTED", decision(audits(h).get(0)), "version 2 still in force");
        h.processElement(preference(null), 0); // tombstone
        h.processElement(message("m-2", NOV_22_10H + 1, "sms"), NOV_22_10H);
        assertEquals(1, deliveries(h).size(), "cleared: the rule alone decides");
        // After a tombstone the version starts again.
        h.processElement(
                preference("{\"userId\":42,\"version\":1,\"optOut\":{\"channels\":[\"sms\"]}}"), 0);
        h.processElement(message("m-3", NOV_22_10H + 2 * 86_400_000L, "sms"), NOV_22_10H);
        assertEquals(2, audits(h).size());
        assertEquals("preference:opt-out", audits(h).get(1).at("/violations/0/scope").asText());
    }

    @Test
    void unreadablePreferencesAndReceiptsAreInvalidControlWithTheirSource() throws Exception {
        var h = harnesses.openWithMirror(ONE_A_DAY, null);
        h.processElement(Records.preference(42L, "{not json", 7), 0);
        h.processElement(Records.preference(43L, "{\"userId\":42,\"version\":1}", 8), 0);
        h.processElement(Records.preference(null, null, 9), 0);
        h.processElement(
                Records.preference(
                        42L,
                        "{\"userId\":42,\"version\":1,\"limits\":[{\"window\":\"1d\",\"max\":1,"
                                + "\"reserve\":{\"slots\":1,\"priority\":50}}]}",
                        10),
                0);
        h.processElement(Records.receipt("{\"messageId\":\"m-1\",\"status\":\"failed\"}", 11), 0);
        List<JsonNode> audits = audits(h);
        assertEquals(5, audits.size(), audits.toString());
        for (int i = 0; i < 4; i++) {
            JsonNode a = audits.get(i);
            assertEquals("INVALID_CONTROL", decision(a));
            assertEquals("user-preferences", a.at("/source/topic").asText());
            assertEquals(7 + i, a.at("/source/offset").asLong());
        }
        assertTrue(audits.get(1).get("error").asText().contains("key"), audits.toString());
        assertEquals("delivery-receipts", audits.get(4).at("/source/topic").asText());
        // None of them changed anything: user 42 has no preferences.
        h.processElement(message("m-2", NOV_22_10H, "sms"), NOV_22_10H);
        assertEquals(1, deliveries(h).size());
    }

    @Test
    void aFailedPushFreesItsPlaceAndItsRetryWithTheSameIdIsAllowed() throws Exception {
        var h = harnesses.openWithMirror(ONE_A_DAY, null);
        h.processElement(message("m-1", NOV_22_10H, "push"), NOV_22_10H);
        h.processElement(message("m-2", NOV_22_10H + 60_000, "push"), NOV_22_10H);
        assertEquals("REJECTED", decision(audits(h).get(0)), "the day's place is used");
        // Receipts that change nothing: another status, an unknown id, a rejected message.
        h.processElement(
                Records.receipt(
                        "{\"messageId\":\"m-1\",\"userId\":42,\"status\":\"delivered\"}",
                        harnesses.nextOffset()),
                0);
        h.processElement(Records.failed("m-9", 42, harnesses.nextOffset()), 0);
        h.processElement(Records.failed("m-2", 42, harnesses.nextOffset()), 0);
        h.processElement(message("m-1", NOV_22_10H + 120_000, "push"), NOV_22_10H);
        assertEquals("DUPLICATE", decision(audits(h).get(1)));

        MirrorModel redis = new MirrorModel().apply(h);
        assertEquals(
                List.of(new MirrorLog.Entry(NOV_22_10H, "push", "m-1")),
                redis.entries(42),
                "receipts that change nothing leave the key as it was");
        h.processElement(Records.failed("m-1", 42, harnesses.nextOffset()), 0);
        redis.apply(h);
        assertNull(redis.key(42), "m-1 un-counted, and 42 counts nothing else");
        // The retry, with the same messageId: decided anew, and the place is free.
        h.processElement(message("m-1", NOV_22_10H + 180_000, "push"), NOV_22_10H);
        assertEquals(2, deliveries(h).size());
        redis.apply(h);
        assertEquals(
                List.of(new MirrorLog.Entry(NOV_22_10H + 180_000, "push", "m-1")),
                redis.entries(42));
        assertEquals(2, audits(h).size(), "receipts write no audit records");
        // Un-counted once: a second failed receipt of the first try finds the retry counted and
        // un-counts it (the sender said it failed), which is all a receipt can name.
    }

    @Test
    void aReceiptOfAMessageStillHeldChangesNothing() throws Exception {
        var h = m1FailedWhileHeld();
        // Once sent, a failed receipt frees the day's place.
        long nine = NOV_23_8H + 3_600_000L;
        h.setProcessingTime(nine);
        h.processElement(Records.failed("m-1", 42, harnesses.nextOffset()), nine);
        h.processElement(message("m-2", nine, "push"), nine);
        assertEquals(2, deliveries(h).size());
        assertEquals(0, audits(h).size());
    }

    @Test
    void aFailedReceiptOfAMessageStillHeldLeavesItCounted() throws Exception {
        var h = m1FailedWhileHeld();
        // It still takes the day's place: the next push waits or is refused, never sent now.
        long half = NOV_23_8H + 1_800_000L;
        h.setProcessingTime(half);
        h.processElement(message("m-2", half, "push"), half);
        assertEquals(1, deliveries(h).size(), "m-1 counts: m-2 is not sent at once");
    }

    @Test
    void forgetUserErasesPreferences() throws Exception {
        var h = harnesses.openWithMirror(ONE_A_DAY, null);
        h.processElement(
                preference("{\"userId\":42,\"version\":5,\"optOut\":{\"channels\":[\"sms\"]}}"), 0);
        h.processBroadcastElement(Records.forgetUser(42), 0);
        h.processElement(message("m-1", NOV_22_10H, "sms"), NOV_22_10H);
        assertEquals(1, deliveries(h).size());
        // and its version: version 1 applies again
        h.processElement(
                preference("{\"userId\":42,\"version\":1,\"optOut\":{\"channels\":[\"sms\"]}}"), 0);
        h.processElement(message("m-2", NOV_22_10H + 2 * 86_400_000L, "sms"), NOV_22_10H);
        assertEquals("REJECTED", decision(audits(h).get(0)));
    }

    @Test
    void preferencesSurviveARestoreAndARescale() throws Exception {
        String optOut = "{\"userId\":%d,\"version\":1,\"optOut\":{\"channels\":[\"sms\"]}}";
        List<OperatorSubtaskState> snapshots = new ArrayList<>();
        List<Long> users = List.of(42L, 43L, 44L, 45L, 46L, 47L);
        for (int subtask = 0; subtask < 2; subtask++) {
            var h = harnesses.open(CappingSettings.of(ONE_A_DAY), null, 2, subtask);
            for (long user : users) {
                if (KeyGroupRangeAssignment.assignKeyToParallelOperator(user, 128, 2) == subtask) {
                    h.processElement(
                            Records.preference(
                                    user, String.format(optOut, user), harnesses.nextOffset()),
                            0);
                }
            }
            snapshots.add(h.snapshot(1, 0));
            harnesses.close(h);
        }
        OperatorSubtaskState merged = CappingHarnesses.rescaled(snapshots, 1, 0);
        var one = harnesses.open(CappingSettings.of(ONE_A_DAY), merged, 1, 0);
        for (long user : users) {
            one.processElement(
                    Records.message("m-" + user, user, NOV_22_10H)
                            .channel("sms")
                            .inbound(harnesses.nextOffset()),
                    NOV_22_10H);
        }
        assertEquals(0, deliveries(one).size(), "every user's opt-out kept");
        assertEquals(users.size(), audits(one).size());
        // and back to three tasks
        OperatorSubtaskState three = one.snapshot(2, 0);
        harnesses.close(one);
        int rejected = 0;
        for (int subtask = 0; subtask < 3; subtask++) {
            var h =
                    harnesses.open(
                            CappingSettings.of(ONE_A_DAY),
                            AbstractStreamOperatorTestHarness.repartitionOperatorState(
                                    three, 128, 1, 3, subtask),
                            3,
                            subtask);
            for (long user : users) {
                if (KeyGroupRangeAssignment.assignKeyToParallelOperator(user, 128, 3) == subtask) {
                    h.processElement(
                            Records.message("n-" + user, user, NOV_22_10H + 2 * 86_400_000L)
                                    .channel("sms")
                                    .inbound(harnesses.nextOffset()),
                            NOV_22_10H);
                }
            }
            assertEquals(0, deliveries(h).size());
            rejected += audits(h).size();
        }
        assertEquals(users.size(), rejected);
    }

    /**
     * "One email a week" under rules of a day: the history the rules would keep (two days) is too
     * short for it, so the user's is kept for the week, and a sweep leaves it be.
     */
    @Test
    void aUsersWeekIsKeptUnderRulesOfADayAlsoThroughASweep() throws Exception {
        var h = harnesses.openWithMirror(ONE_A_DAY, null);
        long day = 86_400_000L;
        h.processElement(
                preference(
                        "{\"userId\":42,\"version\":1,\"channels\":{\"email\":[{\"window\":\"7d\","
                                + "\"max\":1}]}}"),
                0);
        h.processElement(message("e1", NOV_22_10H, "email"), NOV_22_10H);
        h.processElement(message("p1", NOV_22_10H + day, "push"), NOV_22_10H);
        h.processElement(message("p2", NOV_22_10H + 3 * day, "push"), NOV_22_10H);
        h.processElement(message("e2", NOV_22_10H + 4 * day, "email"), NOV_22_10H);
        assertEquals(3, deliveries(h).size());
        JsonNode a = firstAudit(h, "e2");
        assertEquals("preference:channel:email", a.at("/violations/0/scope").asText());

        // Event time ten days on: the rules alone would clear the history, two days their window.
        h.watermark(NOV_22_10H + 9 * day);
        h.processBroadcastElement(ControlRecord.sweep(1), 0);
        h.processElement(message("e3", NOV_22_10H + 6 * day, "email"), NOV_22_10H);
        assertEquals(2, audits(h).size());
        assertEquals("REJECTED", decision(audits(h).get(1)), "e1 is within the week");
        // Without preferences the same sweep clears a user's history, as before.
        h.processElement(Records.message("x1", 43, NOV_22_10H).inbound(harnesses.nextOffset()), 0);
        h.processBroadcastElement(ControlRecord.sweep(2), 0);
        h.processElement(
                Records.message("x2", 43, NOV_22_10H + day / 2).inbound(harnesses.nextOffset()), 0);
        assertEquals("STALE", decision(audits(h).get(2)), "behind what the sweep cleared");
    }

    @Test
    void aFailureWhileApplyingAPreferenceIsAuditedAndTheTaskGoesOn() throws Exception {
        // A state that fails when a preference is written: the disk, say.
        var h =
                harnesses.open(
                        CappingFixtures.withFaultyPreferences(
                                ONE_A_DAY,
                                p -> p,
                                p -> {
                                    throw new IOException("disk gone");
                                },
                                PreferenceStore.CACHED_BYTES),
                        null,
                        1,
                        0);
        h.processElement(
                Records.preference(
                        42L,
                        "{\"userId\":42,\"version\":1,\"optOut\":{\"channels\":[\"sms\"]}}",
                        3),
                0);
        List<JsonNode> audits = audits(h);
        assertEquals(1, audits.size());
        assertEquals("INVALID_CONTROL", decision(audits.get(0)));
        assertEquals("not applied: IOException", audits.get(0).get("error").asText());
        assertEquals(3, audits.get(0).at("/source/offset").asLong());
        // Not in force, and the task goes on deciding.
        h.processElement(message("m-1", NOV_22_10H, "sms"), NOV_22_10H);
        assertEquals(1, deliveries(h).size());
    }
}
