package io.freqcap.operators.capping.held;

import static io.freqcap.operators.capping.CappingFixtures.auditDecisions;
import static io.freqcap.operators.capping.CappingFixtures.dailyConfig;
import static io.freqcap.operators.capping.CappingFixtures.history;
import static io.freqcap.operators.capping.CappingHarnesses.keyed;
import static io.freqcap.schema.Configs.rule;
import static io.freqcap.schema.Configs.version;
import static io.freqcap.schema.Configs.window;
import static io.freqcap.schema.Instants.DAY_1_NOON;
import static io.freqcap.schema.Instants.HOUR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.capping.CappingFunction;
import io.freqcap.operators.capping.CappingHarnesses;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.capping.MirrorModel;
import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.schema.Records;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.List;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code forget-user} (contract.md §7): a user's history and Redis key erased, once. */
public class ForgetUserTest {
    static final String TWO_A_DAY = dailyConfig(1, 2);

    static ControlRecord forget(String userId) {
        return Records.config("{\"command\": \"forget-user\", \"userId\": " + userId + "}");
    }

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    InboundMessage message(long user, String channel, long t) {
        return Records.message("m" + harnesses.offset(), user, t)
                .channel(channel)
                .inbound(harnesses.nextOffset());
    }

    void send(KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ?, ?> h, InboundMessage m)
            throws Exception {
        h.processElement(m, m.timestamp());
    }

    @Test
    void aForgottenUserIsDecidedAsANewUserAndOthersKeepTheirHistory() throws Exception {
        var h = harnesses.openWithMirror(TWO_A_DAY, null);
        MirrorModel redis = new MirrorModel();
        for (long user : new long[] {42, 43}) {
            send(h, message(user, "push", DAY_1_NOON));
            send(h, message(user, "email", DAY_1_NOON + HOUR));
        }
        redis.apply(h);
        assertEquals(2, redis.ids(42).size());
        h.processBroadcastElement(forget("42"), 0);
        List<MirrorWrite> writes = CappingHarnesses.mirrored(h);
        MirrorWrite erase = writes.get(writes.size() - 1);
        assertEquals(MirrorWrite.deletion(42, erase.deletion()), erase, "the user's key deleted");
        assertNotEquals(0, erase.deletion(), "remembered until Redis confirms it");
        redis.apply(h);
        assertNull(redis.key(42));
        assertEquals(2, redis.ids(43).size(), "43's key untouched");

        send(h, message(42, "push", DAY_1_NOON + 2 * HOUR));
        send(h, message(43, "push", DAY_1_NOON + 2 * HOUR));
        assertEquals(5, h.extractOutputValues().size(), "42 allowed again, 43 not");
        assertEquals(List.of("REJECTED"), auditDecisions(h), "only 43's third");
        redis.apply(h);
        assertEquals(List.of("m4"), redis.ids(42), "a new key with only what counts since");
        h.snapshot(1, 1); // writes back the cache
        assertEquals(1, history(h, 42).size());
    }

    /**
     * Contract v4 §7: the erasure of a user's Redis key is remembered in checkpoints until Redis
     * confirms it; a rebuild after a restore (the mirror dropped its backlog, say) deletes the
     * user's key first, by the same deletion, then writes the users still in state.
     */
    @Test
    void anUnconfirmedErasureIsKeptAcrossARestoreAndARebuildDeletesTheKeyFirst() throws Exception {
        var h = harnesses.openWithMirror(TWO_A_DAY, null);
        MirrorModel redis = new MirrorModel();
        send(h, message(42, "push", DAY_1_NOON));
        send(h, message(42, "email", DAY_1_NOON + HOUR));
        send(h, message(43, "push", DAY_1_NOON));
        redis.apply(h);
        h.processBroadcastElement(forget("42"), 0);
        List<MirrorWrite> before = CappingHarnesses.mirrored(h);
        long deletion = before.get(before.size() - 1).deletion();
        var snapshot = h.snapshot(1, 1);
        harnesses.close(h);
        // The deletion never reached Redis (the backlog that held it was dropped).
        assertEquals(List.of("m0", "m1"), redis.ids(42));

        var restored = harnesses.openWithMirror(TWO_A_DAY, snapshot);
        restored.processBroadcastElement(Records.config("{\"command\": \"rebuild-mirror\"}"), 0);
        List<MirrorWrite> writes = CappingHarnesses.mirrored(restored);
        assertEquals(2, writes.size(), writes.toString());
        assertEquals(MirrorWrite.deletion(42, deletion), writes.get(0), "the same deletion");
        assertEquals(43, writes.get(1).userId(), "then the users in state");
        redis.apply(writes);
        assertNull(redis.key(42));
        assertEquals(List.of("m2"), redis.ids(43));
    }

    @Test
    void aLongHistoryIsErasedWhole() throws Exception {
        String many = version(1).rule(rule("*", window("1d", 1000))).json();
        var h = harnesses.open(CappingSettings.of(many));
        for (int i = 0; i < 300; i++) {
            send(h, message(7, "push", DAY_1_NOON + i * 1000L));
        }
        h.processBroadcastElement(forget("7"), 0);
        h.snapshot(1, 1); // writes back whatever memory held
        assertNull(keyed(h, 7, HistoryStore.LONG).value(), "no long history left");
        assertNull(history(h, 7));
        assertTrue(keyed(h, 7, HistoryStore.BUCKETS).isEmpty());
        // Its 300 messages no longer count, nor do their ids.
        send(h, Records.message("m0", 7, DAY_1_NOON + 301_000L).inbound(harnesses.nextOffset()));
        assertEquals(301, h.extractOutputValues().size());
    }

    @Test
    void onlyTheInstanceHoldingTheUserErasesIt() throws Exception {
        int owner = KeyGroupRangeAssignment.assignKeyToParallelOperator(42L, 128, 2);
        for (int subtask = 0; subtask < 2; subtask++) {
            var h =
                    harnesses.open(
                            CappingSettings.of(TWO_A_DAY).withMirror(true), null, 2, subtask);
            h.processBroadcastElement(forget("42"), 0);
            assertEquals(
                    subtask == owner ? 1 : 0,
                    CappingHarnesses.mirrored(h).size(),
                    "subtask " + subtask);
            assertTrue(CappingHarnesses.audits(h).isEmpty());
        }
    }

    @Test
    void aForgetUserWithoutAValidUserIdIsInvalidControl() throws Exception {
        var h = harnesses.open(CappingSettings.of(TWO_A_DAY), null, 1, 0);
        for (String bad : List.of("\"42\"", "-1", "4.2", "null", "18446744073709551616")) {
            h.processBroadcastElement(forget(bad), 0);
        }
        h.processBroadcastElement(Records.config("{\"command\": \"forget-user\"}"), 0);
        List<JsonNode> audits = CappingHarnesses.audits(h);
        assertEquals(6, audits.size());
        for (JsonNode a : audits) {
            assertEquals("INVALID_CONTROL", a.get("decision").asText());
            assertTrue(
                    a.get("error").asText().startsWith("userId: forget-user needs an integer"),
                    a.toString());
        }
    }

    @Test
    void aFailureWhileErasingIsAuditedOnceByTheInstanceThatFailed() throws Exception {
        int owner = KeyGroupRangeAssignment.assignKeyToParallelOperator(42L, 128, 2);
        var h =
                harnesses.open(
                        new CappingFunction(CappingSettings.of(TWO_A_DAY)) {
                            @Override
                            protected String[] eraseUser(long user) {
                                throw new IllegalStateException("disk gone");
                            }
                        },
                        null,
                        2,
                        owner);
        h.processBroadcastElement(forget("42"), 0);
        List<JsonNode> audits = CappingHarnesses.audits(h);
        assertEquals(1, audits.size());
        assertEquals("INVALID_CONTROL", audits.get(0).get("decision").asText());
        assertEquals(
                "not applied: IllegalStateException while erasing user 42",
                audits.get(0).get("error").asText());
        // The task goes on deciding.
        send(h, message(42, "push", DAY_1_NOON));
        assertEquals(1, h.extractOutputValues().size());
    }
}
