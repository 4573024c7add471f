package io.freqcap.operators.capping.held;

import static io.freqcap.operators.capping.CappingFixtures.HOLD_TILL_MORNING;
import static io.freqcap.operators.capping.CappingFixtures.MINUTE;
import static io.freqcap.operators.capping.CappingFixtures.MORNING;
import static io.freqcap.operators.capping.CappingFixtures.NIGHT;
import static io.freqcap.operators.capping.CappingFixtures.heldNow;
import static io.freqcap.operators.capping.CappingFixtures.pushEntry;
import static io.freqcap.operators.capping.CappingHarnesses.audits;
import static io.freqcap.operators.capping.CappingHarnesses.deliveries;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.capping.CappingHarnesses;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.capping.MirrorModel;
import io.freqcap.schema.Records;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Held messages in the capping operator (contract.md §5, §7): kept in keyed state until the wall
 * clock reaches their send time, delivered once with {@code freqcap-send-at}, across a restore and
 * a rescale; forgotten with their user.
 */
public class HeldMessagesTest {
    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> open(
            OperatorSubtaskState restore, int parallelism, int subtask, boolean mirror)
            throws Exception {
        return harnesses.open(
                CappingSettings.of(HOLD_TILL_MORNING).withMirror(mirror),
                restore,
                parallelism,
                subtask);
    }

    void send(KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ?, ?> h, long user, long t)
            throws Exception {
        InboundMessage m =
                Records.message("m" + harnesses.offset(), user, t).inbound(harnesses.nextOffset());
        h.processElement(m, t);
    }

    @Test
    void aNightMessageIsDeliveredWhenTheClockReachesMorningOnceAcrossARestore() throws Exception {
        var h = open(null, 1, 0, true);
        h.setProcessingTime(NIGHT);
        send(h, 42, NIGHT);
        send(h, 42, NIGHT + MINUTE);
        assertEquals(0, deliveries(h).size(), "held, not delivered");
        MirrorModel redis = new MirrorModel().apply(h);
        assertEquals(1, redis.writes(), "counted at once, both in one write");
        assertEquals(
                List.of(pushEntry(MORNING, "m0"), pushEntry(MORNING, "m1")),
                redis.entries(42),
                "scored at the send time");
        assertEquals(MORNING + 86_400_000L, redis.key(42).expireAt(), "a day after 08:00");

        OperatorSubtaskState snapshot = h.snapshot(1, NIGHT);
        h.setProcessingTime(MORNING - 1);
        assertEquals(0, deliveries(h).size());
        h.setProcessingTime(MORNING);
        assertEquals(2, deliveries(h).size(), "both due at 08:00");
        for (Delivery d : deliveries(h)) {
            assertEquals("ALLOWED", d.decision());
            assertEquals(MORNING, d.sendAt());
        }
        h.setProcessingTime(MORNING + 3_600_000L);
        assertEquals(2, deliveries(h).size(), "delivered once");
        redis.apply(h);
        assertEquals(1, redis.writes(), "a release changes nothing counted: no write");
        harnesses.close(h);

        // A restart from the snapshot taken before the release releases them again, once: the
        // deliveries of the failed attempt were never committed.
        var restored = open(snapshot, 1, 0, false);
        restored.setProcessingTime(NIGHT + 2 * MINUTE);
        assertEquals(0, deliveries(restored).size());
        restored.setProcessingTime(MORNING + MINUTE);
        assertEquals(2, deliveries(restored).size());
        restored.setProcessingTime(MORNING + 2 * MINUTE);
        assertEquals(2, deliveries(restored).size());
    }

    /**
     * Contract v4 §6: STALE compares the timestamps messages were stamped with. A message held a
     * week ahead under config v1 must not make the user's next message STALE after config v2
     * shortens the windows (it did while STALE read send times).
     */
    @Test
    void aMessageHeldAWeekAheadNeverMakesLaterMessagesStaleAfterTheWindowsShrink()
            throws Exception {
        long day = 86_400_000L;
        var h =
                harnesses.open(
                        CappingSettings.of(
                                "{\"version\":1,\"rules\":[{\"segment\":\"*\","
                                        + "\"limits\":[{\"window\":\"7d\",\"max\":1}],"
                                        + "\"hold\":\"7d\"}]}"),
                        null,
                        1,
                        0);
        h.setProcessingTime(NIGHT);
        send(h, 42, NIGHT);
        send(h, 42, NIGHT + MINUTE);
        assertEquals(1, deliveries(h).size(), "the first at once");
        h.processBroadcastElement(
                Records.config(
                        "{\"version\":2,\"rules\":[{\"segment\":\"*\","
                                + "\"limits\":[{\"window\":\"1d\",\"max\":5}]}]}"),
                NIGHT);
        for (int d = 1; d <= 3; d++) {
            h.setProcessingTime(NIGHT + d * day);
            send(h, 42, NIGHT + d * day);
        }
        assertEquals(List.of(), audits(h), "none STALE (nor anything else)");
        assertEquals(1 + 3, deliveries(h).size());
        // The held one goes out at its send time, a week after it was stamped.
        h.setProcessingTime(NIGHT + 7 * day + MINUTE);
        assertEquals(NIGHT + 7 * day, deliveries(h).get(4).sendAt());
        // What is STALE still is: older than the latest stamped timestamp minus the longest window.
        send(h, 42, NIGHT + 3 * day - day - 1);
        assertEquals("STALE", audits(h).get(0).get("decision").asText());
    }

    @Test
    void aReplayedMessageWhoseSendTimeHasPassedIsDeliveredAtOnceWithItsSendTime() throws Exception {
        var h = open(null, 1, 0, false);
        h.setProcessingTime(MORNING + 86_400_000L);
        send(h, 42, NIGHT);
        assertEquals(1, deliveries(h).size());
        assertEquals(MORNING, deliveries(h).get(0).sendAt());
        send(h, 42, MORNING + 3_600_000L);
        assertNull(deliveries(h).get(1).sendAt(), "not held: no send-at header");
    }

    @Test
    void forgetUserTurnsHeldMessagesIntoForgottenRecords() throws Exception {
        var h = open(null, 1, 0, false);
        h.setProcessingTime(NIGHT);
        send(h, 42, NIGHT);
        send(h, 43, NIGHT);
        h.processBroadcastElement(Records.forgetUser(42), NIGHT);
        List<JsonNode> audits = audits(h);
        assertEquals(1, audits.size());
        JsonNode a = audits.get(0);
        assertEquals("FORGOTTEN", a.get("decision").asText());
        assertEquals(42, a.get("userId").asLong());
        assertEquals(MORNING, a.get("sendAt").asLong());
        assertEquals("m0", a.get("message").get("messageId").asText());
        h.setProcessingTime(MORNING);
        assertEquals(1, deliveries(h).size(), "only 43's");
        assertEquals(
                "43",
                new String(deliveries(h).get(0).key(), java.nio.charset.StandardCharsets.UTF_8));
    }

    @Test
    void heldMessagesFollowTheirKeyGroupAcrossARescale() throws Exception {
        int users = 40;
        List<OperatorSubtaskState> snapshots = new ArrayList<>();
        for (int subtask = 0; subtask < 2; subtask++) {
            var h = open(null, 2, subtask, false);
            h.setProcessingTime(NIGHT);
            for (long user = 0; user < users; user++) {
                if (subtaskOf(user, 2) == subtask) {
                    send(h, user, NIGHT);
                }
            }
            snapshots.add(h.snapshot(1, NIGHT));
            harnesses.close(h);
        }
        OperatorSubtaskState merged =
                AbstractStreamOperatorTestHarness.repackageState(
                        snapshots.toArray(new OperatorSubtaskState[0]));
        List<Long> delivered = new ArrayList<>();
        long heldAfterRescale = 0;
        for (int subtask = 0; subtask < 3; subtask++) {
            var h =
                    open(
                            AbstractStreamOperatorTestHarness.repartitionOperatorState(
                                    merged, 128, 2, 3, subtask),
                            3,
                            subtask,
                            false);
            heldAfterRescale += heldNow(h);
            h.setProcessingTime(MORNING);
            for (Delivery d : deliveries(h)) {
                long user =
                        Long.parseLong(
                                new String(d.key(), java.nio.charset.StandardCharsets.UTF_8));
                assertEquals(subtask, subtaskOf(user, 3), "released where its key group went");
                delivered.add(user);
            }
        }
        delivered.sort(null);
        assertEquals(java.util.stream.LongStream.range(0, users).boxed().toList(), delivered);
        assertEquals(users, heldAfterRescale, "heldNow of the three tasks, from the counts");
    }

    static int subtaskOf(long user, int parallelism) {
        return org.apache.flink.runtime.state.KeyGroupRangeAssignment.assignKeyToParallelOperator(
                user, 128, parallelism);
    }

    static List<MirrorWrite> mirror(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h) {
        return CappingHarnesses.mirrored(h);
    }
}
