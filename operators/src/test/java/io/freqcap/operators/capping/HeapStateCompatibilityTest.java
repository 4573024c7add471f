package io.freqcap.operators.capping;

import static io.freqcap.operators.capping.CappingFixtures.stored;
import static io.freqcap.operators.capping.CappingFunctionTest.ONE_A_DAY_V1;
import static io.freqcap.schema.Instants.DAY;
import static io.freqcap.schema.Instants.DAY_1_NOON;
import static io.freqcap.schema.Instants.HOUR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.history.EncodedHistory;
import io.freqcap.schema.history.StoredHistorySerializer;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.history.UserHistorySerializer;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Histories on the heap backend (HashMapStateBackend) across the change of {@code history-v1}'s
 * serializer: freqcap 0.1 and 0.2 wrote it with {@link UserHistorySerializer}, so heap state
 * restored from their savepoints holds {@link UserHistory} objects; newer versions also put the
 * history cache's bytes there as {@link EncodedHistory}. Both must decide, snapshot and restore.
 * (The RocksDB side is {@link CappingStateCompatibilityTest}.)
 */
class HeapStateCompatibilityTest {
    static final long OLD_USER = 42;
    static final long NEW_USER = 7;

    /** How freqcap 0.2 declared the state. */
    static final ValueStateDescriptor<UserHistory> OLD_STATE =
            new ValueStateDescriptor<>("history-v1", UserHistorySerializer.INSTANCE);

    private final List<AutoCloseable> open = new ArrayList<>();
    private long offset;

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
    }

    /** Writes, as 0.2 did, a history of one message at noon for {@link #OLD_USER}. */
    static final class OldWriter extends KeyedProcessFunction<Long, Long, Void> {
        private transient ValueState<UserHistory> history;

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
            history = getRuntimeContext().getState(OLD_STATE);
        }

        @Override
        public void processElement(Long user, Context ctx, Collector<Void> out) throws Exception {
            history.update(UserHistory.EMPTY.with(DAY_1_NOON, 99, "push", "old-1"));
        }
    }

    OperatorSubtaskState oldSnapshot() throws Exception {
        var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new KeyedProcessOperator<>(new OldWriter()),
                        (Long user) -> user,
                        Types.LONG,
                        128,
                        1,
                        0);
        h.setStateBackend(new HashMapStateBackend());
        open.add(h);
        h.open();
        h.processElement(OLD_USER, DAY_1_NOON);
        return h.snapshot(1, 1);
    }

    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> capping(
            OperatorSubtaskState restoreFrom) throws Exception {
        var h =
                new KeyedBroadcastOperatorTestHarness<>(
                        new CappingOperator(new CappingFunction(CappingSettings.of(ONE_A_DAY_V1))),
                        InboundMessage::routingKey,
                        Types.LONG,
                        128,
                        1,
                        0);
        h.setStateBackend(new HashMapStateBackend());
        open.add(h);
        h.setup();
        h.initializeState(restoreFrom);
        h.open();
        return h;
    }

    InboundMessage message(String id, long user, long t) {
        String json =
                String.format(
                        "{\"messageId\":\"%s\",\"userId\":%d,\"channel\":\"push\","
                                + "\"timestamp\":%d}",
                        id, user, t);
        return InboundMessage.of(
                new RawRecord(null, json.getBytes(StandardCharsets.UTF_8), "in", 0, offset++));
    }

    static List<String> allowed(KeyedBroadcastOperatorTestHarness<?, ?, ?, Delivery> h)
            throws Exception {
        List<String> ids = new ArrayList<>();
        for (Delivery d : h.extractOutputValues()) {
            ids.add(Json.MAPPER.readTree(d.value()).get("messageId").asText());
        }
        return ids;
    }

    static List<String> rejected(KeyedBroadcastOperatorTestHarness<?, ?, ?, Delivery> h)
            throws Exception {
        return CappingHarnesses.audits(h).stream()
                .filter(a -> a.get("decision").asText().equals("REJECTED"))
                .map(a -> a.get("message").get("messageId").asText())
                .toList();
    }

    @Test
    void heapStateOfAnOlderVersionDecidesSnapshotsAndRestores() throws Exception {
        var first = capping(oldSnapshot());
        // The old history counts: a second message the same day is over 1 a day.
        first.processElement(message("a", OLD_USER, DAY_1_NOON + HOUR), DAY_1_NOON + HOUR);
        first.processElement(message("b", NEW_USER, DAY_1_NOON + HOUR), DAY_1_NOON + HOUR);
        assertEquals(List.of("b"), allowed(first));
        assertEquals(List.of("a"), rejected(first));
        // Snapshotting flushes the cache: the new user's history is the cache's bytes, the old
        // user's the object restored from 0.2's savepoint.
        OperatorSubtaskState both = first.snapshot(2, 2);
        assertTrue(stored(first, NEW_USER) instanceof EncodedHistory);
        assertTrue(stored(first, OLD_USER) instanceof UserHistory);

        var second = capping(both);
        assertEquals(
                UserHistory.EMPTY.with(DAY_1_NOON, 99, "push", "old-1"),
                StoredHistorySerializer.decoded(stored(second, OLD_USER)));
        assertEquals(1, StoredHistorySerializer.decoded(stored(second, NEW_USER)).size());
        second.processElement(message("c", NEW_USER, DAY_1_NOON + 2 * HOUR), DAY_1_NOON + 2 * HOUR);
        second.processElement(message("d", OLD_USER, DAY_1_NOON + DAY), DAY_1_NOON + DAY);
        assertEquals(List.of("d"), allowed(second));
        assertEquals(List.of("c"), rejected(second));
    }
}
