package io.freqcap.operators.capping.fatigue;

import static io.freqcap.operators.capping.CappingFixtures.assertViolations;
import static io.freqcap.operators.capping.CappingFixtures.firstAudit;
import static io.freqcap.operators.capping.CappingHarnesses.audits;
import static io.freqcap.operators.capping.CappingHarnesses.deliveries;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.capping.CappingHarnesses;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.schema.Records;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Caps that follow engagement (contract.md §3 {@code fatigue}, §6 "Fatigue", §11) in the capping
 * operator on RocksDB: the contract's example step by step, across a rescale and a restore; an
 * engagement receipt restores the full caps; {@code forget-user} erases the last engagement and the
 * sweep drops it with the history; a receipt of a user with nothing counted changes nothing.
 */
public class FatigueTest {
    /** {@code examples/limit-config-fatigue.json}. */
    static final String FATIGUE_CONFIG =
            "{\"version\":12,\"timezone\":\"Europe/Berlin\",\"rules\":[{\"segment\":\"*\","
                    + "\"limits\":[{\"calendar\":\"day\",\"max\":4},{\"window\":\"7d\",\"max\":12}],"
                    + "\"channels\":{\"email\":[{\"calendar\":\"day\",\"max\":2}]},"
                    + "\"fatigue\":{\"after\":5,\"scale\":0.5,\"floor\":1,\"window\":\"30d\"}}],"
                    + "\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":[{\"calendar\":\"day\","
                    + "\"max\":4},{\"window\":\"7d\",\"max\":12}],\"fatigue\":{\"after\":3,"
                    + "\"scale\":0.25,\"floor\":1,\"window\":\"14d\"}}]},"
                    + "\"exempt\":[\"transactional\"]}";

    /** {@code examples/receipt-opened.json}: 07:00 UTC on 25 November 2025. */
    static final String RECEIPT_OPENED =
            "{\"messageId\": \"m-000512\", \"userId\": 42, \"status\": \"opened\", \"timestamp\":"
                    + " 1764054000000}";

    /** Two a day, halved from the first message on, never below zero. */
    static final String HALVING =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\","
                    + "\"max\":4}],\"fatigue\":{\"after\":1,\"scale\":0.5,\"floor\":0,"
                    + "\"window\":\"30d\"}}]}";

    static final long DAY = 86_400_000L;

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    /** 10:00 and later hours in Berlin on a day of November 2025. */
    static long berlin(int day, int hour) {
        return LocalDateTime.of(2025, 11, day, hour, 0)
                .atZone(ZoneId.of("Europe/Berlin"))
                .toInstant()
                .toEpochMilli();
    }

    InboundMessage push(String id, long t) {
        return Records.message(id, 42, t).channel("push").inbound(harnesses.nextOffset());
    }

    InboundMessage opened(long user, long at) {
        return Records.receipt(
                "{\"messageId\":\"m-0\",\"userId\":"
                        + user
                        + ",\"status\":\"opened\",\"timestamp\":"
                        + at
                        + "}",
                harnesses.nextOffset());
    }

    /** The decision of every record the harness emitted, by messageId, in order. */
    static List<String> decisions(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h)
            throws Exception {
        List<String> out = new ArrayList<>();
        for (Object o : h.getOutput()) {
            if (o instanceof org.apache.flink.streaming.runtime.streamrecord.StreamRecord<?> r
                    && r.getValue() instanceof Delivery d) {
                out.add(Json.MAPPER.readTree(d.value()).get("messageId").asText() + " ALLOWED");
            }
        }
        for (JsonNode a : audits(h)) {
            out.add(a.get("messageId").asText() + " " + a.get("decision").asText());
        }
        return out;
    }

    @Test
    void theContractsExampleLowersCapsStepByStepAcrossARescaleAndAnOpenRestoresThem()
            throws Exception {
        var one = harnesses.open(CappingSettings.of(FATIGUE_CONFIG));
        // u = 0..3: four a day
        for (int hour = 10; hour < 14; hour++) {
            one.processElement(push("a" + hour, berlin(1, hour)), 0);
        }
        // u = 4: still four; u = 5: two a day, six a week
        one.processElement(push("b10", berlin(2, 10)), 0);
        one.processElement(push("b11", berlin(2, 11)), 0);
        one.processElement(push("b12", berlin(2, 12)), 0);
        assertEquals(6, deliveries(one).size());
        JsonNode b12 = firstAudit(one, "b12");
        assertViolations(
                "[{\"scope\":\"all\",\"calendar\":\"day\",\"max\":2,\"count\":2,"
                        + "\"fatigue\":{\"unengaged\":6,\"configured\":4}},"
                        + "{\"scope\":\"all\",\"window\":\"7d\",\"max\":6,\"count\":6,"
                        + "\"fatigue\":{\"unengaged\":6,\"configured\":12}}]",
                b12);
        // The shadow rule (after 3, a quarter, 14 days) reads the same u: 6 is two steps, 4 → 1.
        assertEquals("REJECTED", b12.at("/shadow/decision").asText());
        assertEquals(
                "{\"unengaged\":6,\"configured\":4}",
                b12.at("/shadow/violations/0/fatigue").toString());

        // A rescale to two tasks: user 42's history (and u with it) moves to its new task.
        OperatorSubtaskState snapshot = one.snapshot(1, 0);
        harnesses.close(one);
        int task = KeyGroupRangeAssignment.assignKeyToParallelOperator(42L, 128, 2);
        var two =
                harnesses.open(
                        CappingSettings.of(FATIGUE_CONFIG),
                        CappingHarnesses.rescaled(List.of(snapshot), 2, task),
                        2,
                        task);
        // Eight days on (the week is empty, the 30 days are not): u = 6, 7 two a day.
        two.processElement(push("c10", berlin(10, 10)), 0);
        two.processElement(push("c11", berlin(10, 11)), 0);
        two.processElement(push("d10", berlin(11, 10)), 0);
        two.processElement(push("d11", berlin(11, 11)), 0);
        // u = 10..14: one a day, three a week
        two.processElement(push("e10", berlin(19, 10)), 0);
        two.processElement(push("f10", berlin(20, 10)), 0);
        two.processElement(push("f11", berlin(20, 11)), 0);
        assertEquals(6, deliveries(two).size(), decisions(two).toString());
        JsonNode f11 = firstAudit(two, "f11");
        // The contract's words (§6): u = 12, one a day.
        assertViolations(
                "[{\"scope\":\"all\",\"calendar\":\"day\",\"max\":1,\"count\":1,"
                        + "\"fatigue\":{\"unengaged\":12,\"configured\":4}}]",
                f11);
        assertEquals(berlin(21, 0), f11.get("retryAfter").asLong(), "the next local day");

        // The open of examples/receipt-opened.json, then a restore: the full caps are back.
        two.processElement(Records.receipt(RECEIPT_OPENED, harnesses.nextOffset()), berlin(25, 8));
        OperatorSubtaskState afterOpen = two.snapshot(2, 0);
        harnesses.close(two);
        var restored = harnesses.open(CappingSettings.of(FATIGUE_CONFIG), afterOpen, 2, task);
        for (int hour = 10; hour < 15; hour++) {
            restored.processElement(push("g" + hour, berlin(25, hour)), 0);
        }
        assertEquals(4, deliveries(restored).size(), decisions(restored).toString());
        JsonNode g14 = firstAudit(restored, "g14");
        assertViolations(
                "[{\"scope\":\"all\",\"calendar\":\"day\",\"max\":4,\"count\":4}]",
                g14,
                "u = 4 since the open: the configured cap, no fatigue");
    }

    @Test
    void anOpenResetsTheCountFromItsTimestamp() throws Exception {
        var h = harnesses.open(CappingSettings.of(HALVING));
        h.processElement(push("m1", berlin(22, 10)), 0);
        h.processElement(push("m2", berlin(22, 11)), 0); // u = 1: two a day
        h.processElement(push("m3", berlin(22, 11) + 1_800_000L), 0); // u = 2: one a day
        h.processElement(opened(42, berlin(22, 12)), 0);
        h.processElement(push("m4", berlin(22, 12) + 1_800_000L), 0); // u = 0: four a day
        h.processElement(push("m5", berlin(22, 13)), 0); // u = 1 (m4): two a day
        // Stamped before the open, read after it: (e, t] is empty, the full cap applies.
        h.processElement(push("m6", berlin(22, 11) + 2_700_000L), 0);
        assertEquals(
                List.of(
                        "m1 ALLOWED",
                        "m2 ALLOWED",
                        "m4 ALLOWED",
                        "m6 ALLOWED",
                        "m3 REJECTED",
                        "m5 REJECTED"),
                decisions(h));
        assertEquals(
                "{\"unengaged\":1,\"configured\":4}",
                audits(h).get(1).at("/violations/0/fatigue").toString());
    }

    @Test
    void forgetUserErasesTheLastEngagement() throws Exception {
        var h = harnesses.open(CappingSettings.of(HALVING));
        h.processElement(push("m0", berlin(1, 10)), 0);
        // An open stamped in the future: while kept, no message before it is ever unengaged.
        h.processElement(opened(42, berlin(30, 23)), 0);
        h.processBroadcastElement(Records.forgetUser(42), 0);
        h.processElement(push("m1", berlin(22, 10)), 0);
        h.processElement(push("m2", berlin(22, 11)), 0);
        h.processElement(push("m3", berlin(22, 12)), 0);
        assertEquals(
                List.of("m0 ALLOWED", "m1 ALLOWED", "m2 ALLOWED", "m3 REJECTED"),
                decisions(h),
                "erased with the user: u counts m1 and m2");
    }

    /** The last engagement of user {@code user} in the task's keyed state, or null. */
    static Long lastEngagement(KeyedBroadcastOperatorTestHarness<Long, ?, ?, ?> h, long user)
            throws Exception {
        return CappingHarnesses.keyed(h, user, EngagementStore.STATE).value();
    }

    @Test
    void theSweepDropsTheLastEngagementWithTheHistoryAndKeepsTheFatigueWindowStale()
            throws Exception {
        var h = harnesses.open(CappingSettings.of(HALVING));
        long start = berlin(1, 10);
        h.processElement(push("m0", start), 0);
        h.processElement(opened(42, start + 3_600_000L), 0); // he opened it
        h.processElement(Records.message("x0", 43, start).inbound(harnesses.nextOffset()), 0);
        h.processElement(
                Records.receipt(
                        "{\"messageId\":\"x0\",\"userId\":43,\"status\":\"opened\","
                                + "\"timestamp\":"
                                + (start + 100 * DAY)
                                + "}",
                        harnesses.nextOffset()),
                0);
        assertEquals(start + 3_600_000L, lastEngagement(h, 42));
        // Twice the kept window (the fatigue's 30 days) and a day behind the watermark: both
        // histories go; 42's open is as old as them and goes too, 43's (stamped ahead) stays
        // until it is that old.
        h.watermark(start + 61 * DAY);
        h.processBroadcastElement(ControlRecord.sweep(1), 0);
        assertNull(lastEngagement(h, 42), "dropped with the history");
        assertEquals(start + 100 * DAY, lastEngagement(h, 43));
        // A message up to the fatigue's window after the cleared entry would count it in u: STALE,
        // as one within the limits' window is.
        h.processElement(push("m1", start + 20 * DAY), 0);
        h.processElement(push("m2", start + 31 * DAY), 0);
        assertEquals(List.of("m0 ALLOWED", "x0 ALLOWED", "m2 ALLOWED", "m1 STALE"), decisions(h));
        h.watermark(start + 101 * DAY + 60 * DAY);
        h.processBroadcastElement(ControlRecord.sweep(2), 0);
        assertNull(lastEngagement(h, 43), "once it is as old as what the sweep clears");
    }

    /** Four a day; only the shadow rule has a fatigue, with a 30-day window. */
    static final String SHADOW_FATIGUE =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\","
                    + "\"max\":4}]}],\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"1d\",\"max\":4}],\"fatigue\":{\"after\":1,\"scale\":0.5,"
                    + "\"floor\":0,\"window\":\"30d\"}}]}}";

    @Test
    void aShadowRulesFatigueWindowNeverWidensWhatASweepMakesStale() throws Exception {
        var h = harnesses.open(CappingSettings.of(SHADOW_FATIGUE));
        long start = berlin(1, 10);
        h.processElement(push("m0", start), 0);
        // The history is kept twice the shadow's 30 days, then swept.
        h.watermark(start + 61 * DAY);
        h.processBroadcastElement(ControlRecord.sweep(1), 0);
        // Within the rules' day of the cleared entry: STALE. Ten days on, within the shadow's
        // fatigue window only: decided (the shadow decision sees less, contract.md §6).
        h.processElement(push("m1", start + DAY / 2), 0);
        h.processElement(push("m2", start + 10 * DAY), 0);
        assertEquals(List.of("m0 ALLOWED", "m2 ALLOWED", "m1 STALE"), decisions(h));
    }

    @Test
    void anEngagementStampedPastTheClockPlusMaxFutureChangesNothing() throws Exception {
        var h = harnesses.open(CappingSettings.of(HALVING));
        h.processElement(push("m0", berlin(1, 10)), 0);
        // It would switch fatigue off for good (contract.md §11): ignored.
        long wall = System.currentTimeMillis();
        h.processElement(opened(42, wall + 2 * DAY), 0);
        assertNull(lastEngagement(h, 42), "an open stamped two days ahead of the clock");
        h.processElement(opened(42, wall + DAY / 2), 0);
        long applied = lastEngagement(h, 42);
        assertTrue(applied >= wall + DAY / 2 && applied <= wall + DAY, "within --max-future");
    }

    @Test
    void anEngagementOfAUserWithNothingCountedChangesNothing() throws Exception {
        var h = harnesses.open(CappingSettings.of(HALVING));
        h.processElement(opened(42, berlin(30, 23)), 0);
        h.processElement(push("m1", berlin(22, 10)), 0);
        h.processElement(push("m2", berlin(22, 11)), 0);
        h.processElement(push("m3", berlin(22, 12)), 0);
        assertEquals(List.of("m1 ALLOWED", "m2 ALLOWED", "m3 REJECTED"), decisions(h));
        assertFalse(
                audits(h).stream()
                        .anyMatch(a -> a.get("decision").asText().equals("INVALID_CONTROL")));
    }
}
