package io.freqcap.operators.capping;

import static io.freqcap.schema.Configs.rule;
import static io.freqcap.schema.Configs.version;
import static io.freqcap.schema.Configs.window;
import static io.freqcap.schema.Instants.DAY_1_NOON;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.Records;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.segment.SegmentBitmap;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.stream.LongStream;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A snapshot taken at parallelism 2, with new histories still only in the history cache, restored
 * at 1 and at 3: every user's history, the config in force (a newer version than the initial one,
 * received from the topic) and the segments survive the rescale.
 */
class CappingRescaleTest {
    static final int MAX_PARALLELISM = 128;
    static final int USERS = 60;

    /** Initial: generous, so that a lost config would show. */
    static final String V1 = version(1).rule(rule("*", window("1d", 9))).json();

    /** From the topic: vip 3 a day, everyone else 2. */
    static final String V2 =
            version(2).rule(rule("vip", window("1d", 3))).rule(rule("*", window("1d", 2))).json();

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    static boolean vip(long user) {
        return user % 2 == 0;
    }

    static int allowedPerDay(long user) {
        return vip(user) ? 3 : 2;
    }

    ControlRecord control(ControlRecord.Kind kind, String json) {
        return new ControlRecord(
                kind, json.getBytes(StandardCharsets.UTF_8), "control", 0, harnesses.nextOffset());
    }

    void send(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> h,
            long user,
            int i)
            throws Exception {
        long t = DAY_1_NOON + i * 60_000L;
        h.processElement(
                Records.message("m" + user + "-" + i, user, t).inbound(harnesses.nextOffset()),
                DAY_1_NOON);
    }

    static int subtaskOf(long user, int parallelism) {
        return KeyGroupRangeAssignment.assignKeyToParallelOperator(
                user, MAX_PARALLELISM, parallelism);
    }

    @ParameterizedTest(name = "restored at parallelism {0}")
    @ValueSource(ints = {1, 3})
    void historiesConfigAndSegmentsSurviveARescale(int newParallelism) throws Exception {
        String vipSegment =
                "{\"segmentId\":\"vip\",\"version\":1,\"priority\":10,\"format\":\"roaring64\","
                        + "\"bitmap\":\""
                        + Base64.getEncoder()
                                .encodeToString(
                                        SegmentBitmap.of(
                                                        LongStream.range(0, USERS)
                                                                .filter(CappingRescaleTest::vip)
                                                                .toArray())
                                                .write(SegmentBitmap.Format.ROARING64))
                        + "\"}";
        List<OperatorSubtaskState> snapshots = new ArrayList<>();
        for (int subtask = 0; subtask < 2; subtask++) {
            // write-back cache on (the default slots): histories are dirty until the snapshot
            var h = harnesses.open(CappingSettings.of(V1), null, 2, subtask);
            h.processBroadcastElement(control(ControlRecord.Kind.CONFIG, V2), DAY_1_NOON);
            h.processBroadcastElement(control(ControlRecord.Kind.SEGMENT, vipSegment), DAY_1_NOON);
            for (long user = 0; user < USERS; user++) {
                if (subtaskOf(user, 2) == subtask) {
                    for (int i = 0; i < allowedPerDay(user); i++) {
                        send(h, user, i);
                    }
                }
            }
            assertTrue(
                    h.getSideOutput(CappingFunction.AUDIT) == null,
                    "every message allowed before the snapshot");
            snapshots.add(h.snapshot(1, DAY_1_NOON));
            harnesses.close(h);
        }
        OperatorSubtaskState merged =
                AbstractStreamOperatorTestHarness.repackageState(
                        snapshots.toArray(new OperatorSubtaskState[0]));

        int checked = 0;
        for (int subtask = 0; subtask < newParallelism; subtask++) {
            OperatorSubtaskState restore =
                    AbstractStreamOperatorTestHarness.repartitionOperatorState(
                            merged, MAX_PARALLELISM, 2, newParallelism, subtask);
            var h = harnesses.open(CappingSettings.of(V1), restore, newParallelism, subtask);
            for (long user = 0; user < USERS; user++) {
                if (subtaskOf(user, newParallelism) == subtask) {
                    send(h, user, 10); // one more the same day: over the cap of v2
                    checked++;
                }
            }
            assertEquals(0, h.extractOutputValues().size(), "nothing allowed after the rescale");
            for (StreamRecord<AuditEvent> r : h.getSideOutput(CappingFunction.AUDIT)) {
                JsonNode a = Json.MAPPER.readTree(r.getValue().json());
                long user = a.get("userId").asLong();
                assertEquals("REJECTED", a.get("decision").asText(), a.toString());
                assertEquals(2, a.get("configVersion").asLong(), "v2 still in force: " + a);
                assertEquals(vip(user) ? "vip" : "*", a.get("segment").asText(), a.toString());
                assertEquals(
                        allowedPerDay(user),
                        a.get("violations").get(0).get("count").asInt(),
                        "the history survived: " + a);
            }
        }
        assertEquals(USERS, checked);
    }
}
