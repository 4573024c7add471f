package io.freqcap.operators.capping;

import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;

/**
 * Opens capping operators in Flink's test harness on RocksDB, as the job wires them (keyed by
 * routing key, with the segments broadcast descriptor), and closes them all at the end of a test.
 */
public final class CappingHarnesses implements AutoCloseable {
    private final List<
                    KeyedBroadcastOperatorTestHarness<
                            Long, InboundMessage, ControlRecord, Delivery>>
            open = new ArrayList<>();

    public KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> open(
            CappingFunction function,
            OperatorSubtaskState restoreFrom,
            int parallelism,
            int subtask)
            throws Exception {
        var h =
                new KeyedBroadcastOperatorTestHarness<>(
                        new CappingOperator(function),
                        InboundMessage::routingKey,
                        Types.LONG,
                        128,
                        parallelism,
                        subtask);
        h.setStateBackend(new EmbeddedRocksDBStateBackend());
        h.setup();
        if (restoreFrom == null) {
            h.initializeEmptyState();
        } else {
            h.initializeState(restoreFrom);
        }
        h.open();
        open.add(h);
        return h;
    }

    /** Closes one harness early (its state released), so that {@link #close} skips it. */
    public void close(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h) throws Exception {
        open.remove(h);
        h.close();
    }

    @Override
    public void close() throws Exception {
        for (var h : open) {
            h.close();
        }
        open.clear();
    }
}
