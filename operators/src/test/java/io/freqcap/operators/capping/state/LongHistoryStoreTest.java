package io.freqcap.operators.capping.state;

import static io.freqcap.schema.Configs.rule;
import static io.freqcap.schema.Configs.version;
import static io.freqcap.schema.Configs.window;
import static io.freqcap.schema.Instants.MINUTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.operators.capping.CappingFunction;
import io.freqcap.operators.capping.CappingHarnesses;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.capping.history.EntryBytes;
import io.freqcap.operators.capping.rule.RuleStep;
import io.freqcap.schema.Records;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Several heavy users on one task with room in memory for fewer of them: histories go long and back
 * to short, are written and dropped to make room and read back, across restores, and every decision
 * is the one the short history's rule makes.
 */
class LongHistoryStoreTest {
    static final long T0 = 1_763_812_800_000L;
    static final String CONFIG =
            version(1)
                    .rule(
                            rule("*", window("1h", 150), window("3h", 400))
                                    .channel("email", window("1h", 40)))
                    .json();

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> open(
            OperatorSubtaskState from) throws Exception {
        return harnesses.open(
                CappingSettings.of(CONFIG)
                        .withHistoryCache(64)
                        .withLiveHistoryBytes(700 * EntryBytes.PER_ENTRY),
                from,
                1,
                0);
    }

    @Test
    void heavyUsersBeyondTheMemoryBudgetAreDecidedAsShortHistoriesWouldBe() throws Exception {
        LimitConfig config = LimitConfig.parse(CONFIG);
        Random random = new Random(99);
        Map<Long, UserHistory> reference = new HashMap<>();
        Map<Long, Long> clock = new HashMap<>();
        var h = open(null);
        int allowed = 0;
        long wall = 0; // the wall clock follows the traffic, as it does in the job
        for (int i = 0; i < 40_000; i++) {
            long user = random.nextInt(8); // eight users, room for about two long ones
            long t = clock.merge(user, (long) random.nextInt(20) * 1000, Long::sum) + T0;
            if (random.nextInt(500) == 0) {
                clock.merge(user, 7 * 60 * MINUTE, Long::sum); // a pause: the history shrinks
            }
            if (random.nextInt(50) == 0) {
                t -= random.nextInt(90) * MINUTE; // late
            }
            String channel = random.nextInt(5) == 0 ? "email" : "push";
            String id = random.nextInt(300) == 0 ? "m" + (i - 1 - random.nextInt(50)) : "m" + i;
            InboundMessage in =
                    Records.message(id, user, Math.max(0, t))
                            .channel(channel)
                            .inbound(harnesses.nextOffset());
            OutboundMessage m = in.message();
            wall = Math.max(wall, m.timestamp());
            h.setProcessingTime(wall);
            RuleStep.Result expected =
                    RuleStep.decide(
                            reference.getOrDefault(user, UserHistory.EMPTY), m, config, "*");
            reference.put(user, expected.history());
            h.processElement(in, m.timestamp());
            assertEquals(expected.decision().name(), decision(h), "message " + i);
            if (expected.decision() == Decision.ALLOWED) {
                allowed++;
            }
            if (i % 9_000 == 8_999) {
                OperatorSubtaskState snapshot = h.snapshot(i, i);
                harnesses.close(h);
                h = open(snapshot);
            }
        }
        assertTrue(allowed > 15_000, allowed + " allowed");
        int longest = reference.values().stream().mapToInt(UserHistory::size).max().getAsInt();
        assertTrue(
                longest > io.freqcap.operators.capping.history.HistoryGrowth.LONG_AT,
                "long histories: " + longest);

        // Four users come back after a pause: their long histories are pruned to short ones.
        for (long user = 0; user < 4; user++) {
            long t = T0 + clock.get(user) + 7 * 60 * MINUTE;
            wall = Math.max(wall, t);
            h.setProcessingTime(wall);
            h.processElement(
                    Records.message("back-" + user, user, t).inbound(harnesses.nextOffset()), t);
            assertEquals("ALLOWED", decision(h));
        }

        // What keyed state holds: a short history or a long one, never both, no stray buckets.
        h.snapshot(99_999, 99_999); // writes what memory holds
        var backend = h.getOperator().getKeyedStateBackend();
        int longOnes = 0;
        int shortOnes = 0;
        for (long user : reference.keySet()) {
            backend.setCurrentKey(user);
            boolean isLong = CappingHarnesses.keyed(backend, HistoryStore.LONG).value() != null;
            boolean isShort = CappingHarnesses.keyed(backend, HistoryStore.STATE).value() != null;
            boolean anyBucket =
                    CappingHarnesses.keyed(backend, HistoryStore.BUCKETS)
                            .keys()
                            .iterator()
                            .hasNext();
            assertTrue(!(isLong && isShort), "user " + user + " has both forms");
            assertEquals(isLong, anyBucket, "buckets of user " + user);
            longOnes += isLong ? 1 : 0;
            shortOnes += isShort ? 1 : 0;
        }
        assertTrue(longOnes > 0 && shortOnes > 0, longOnes + " long, " + shortOnes + " short");
    }

    private static String decision(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> h)
            throws Exception {
        Queue<Object> out = h.getOutput();
        Object o = out.poll();
        if (o instanceof StreamRecord<?> r && r.getValue() instanceof Delivery d) {
            return d.decision();
        }
        var a = h.getSideOutput(CappingFunction.AUDIT).poll();
        return io.freqcap.schema.common.Json.MAPPER
                .readTree(a.getValue().json())
                .get("decision")
                .asText();
    }
}
