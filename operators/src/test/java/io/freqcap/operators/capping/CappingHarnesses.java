package io.freqcap.operators.capping;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.mirror.WriterSide;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Opens capping operators in Flink's test harness on RocksDB, as the job wires them (keyed by
 * routing key, with the segments broadcast descriptor), and closes them all at the end of a test
 * (registered with {@code @RegisterExtension}, or in a try-with-resources). Also reads what a
 * harness emitted.
 */
public final class CappingHarnesses implements AutoCloseable, AfterEachCallback {
    private final List<
                    KeyedBroadcastOperatorTestHarness<
                            Long, InboundMessage, ControlRecord, Delivery>>
            open = new ArrayList<>();

    private long offset;

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

    /** The input offset the next record of this test reads as: each record has its own. */
    public long nextOffset() {
        return offset++;
    }

    /** The offset {@link #nextOffset} gives next. */
    public long offset() {
        return offset;
    }

    /** A task of parallelism 1 with these settings, started without state. */
    public KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> open(
            CappingSettings settings) throws Exception {
        return open(new CappingFunction(settings), null, 1, 0);
    }

    /** A task of parallelism 1 with these settings, restored if given. */
    public KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> open(
            CappingSettings settings, OperatorSubtaskState restoreFrom) throws Exception {
        return open(new CappingFunction(settings), restoreFrom, 1, 0);
    }

    /** A task of parallelism 1 under this config with the Redis mirror on, restored if given. */
    public KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery>
            openWithMirror(String config, OperatorSubtaskState restoreFrom) throws Exception {
        return open(CappingSettings.of(config).withMirror(true), restoreFrom);
    }

    /** Subtask {@code subtask} of {@code parallelism} with these settings, restored if given. */
    public KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> open(
            CappingSettings settings,
            OperatorSubtaskState restoreFrom,
            int parallelism,
            int subtask)
            throws Exception {
        return open(new CappingFunction(settings), restoreFrom, parallelism, subtask);
    }

    /**
     * The snapshots of every task of a job (max parallelism 128), as task {@code index} of {@code
     * parallelism} restores them: a rescale.
     */
    public static OperatorSubtaskState rescaled(
            List<OperatorSubtaskState> snapshots, int parallelism, int index) throws Exception {
        return AbstractStreamOperatorTestHarness.repartitionOperatorState(
                AbstractStreamOperatorTestHarness.repackageState(
                        snapshots.toArray(new OperatorSubtaskState[0])),
                128,
                snapshots.size(),
                parallelism,
                index);
    }

    /** A keyed state of the backend's current key. */
    public static <S extends State> S keyed(KeyedStateBackend<?> backend, StateDescriptor<S, ?> d)
            throws Exception {
        return backend.getPartitionedState(
                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, d);
    }

    /** A keyed state of one user in a harness's task (the backend's current key set to it). */
    public static <S extends State> S keyed(
            KeyedBroadcastOperatorTestHarness<Long, ?, ?, ?> h, long user, StateDescriptor<S, ?> d)
            throws Exception {
        var backend = h.getOperator().getKeyedStateBackend();
        backend.setCurrentKey(user);
        return keyed(backend, d);
    }

    /** The audit records a harness emitted, parsed, in order. */
    public static List<JsonNode> audits(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h)
            throws Exception {
        List<JsonNode> out = new ArrayList<>();
        var side = h.getSideOutput(CappingFunction.AUDIT);
        if (side != null) {
            for (StreamRecord<AuditEvent> r : side) {
                if (!r.getValue().held()) {
                    out.add(Json.MAPPER.readTree(r.getValue().json()));
                }
            }
        }
        return out;
    }

    /**
     * A checkpoint as a task takes it: what goes out before the barrier (the held topic's notices,
     * the mirror's writes), then the snapshot.
     */
    public static OperatorSubtaskState checkpoint(
            KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h, long id, long timestamp)
            throws Exception {
        h.prepareSnapshotPreBarrier(id);
        return h.snapshot(id, timestamp);
    }

    /** The checkpoint ids {@link #heldRecords} takes its snapshots under. */
    private static long checkpoints = 1_000_000;

    /**
     * The held topic's records a harness emitted (contract.md §12), each as its key text and its
     * JSON text (null for a tombstone): those of the audit side output in order, then those that
     * rode with the deliveries, in order (between two checkpoints, a key's records all take one of
     * the two ways).
     */
    public static List<String[]> heldRecords(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h)
            throws Exception {
        // What a read_committed reader sees once the next checkpoint commits: the notices of the
        // messages held since the last one are written before its barrier.
        checkpoint(h, ++checkpoints, h.getProcessingTime());
        List<String[]> out = new ArrayList<>();
        var side = h.getSideOutput(CappingFunction.AUDIT);
        if (side != null) {
            for (StreamRecord<AuditEvent> r : side) {
                AuditEvent a = r.getValue();
                if (a.held()) {
                    out.add(new String[] {text(a.key()), a.json() == null ? null : text(a.json())});
                }
            }
        }
        for (Object o : h.extractOutputValues()) {
            if (o instanceof Delivery d && d.isHeldTopic()) {
                out.add(new String[] {text(d.key()), d.value() == null ? null : text(d.value())});
            }
        }
        return out;
    }

    /** The keys the held topic holds live after these records, and their notices. */
    public static java.util.Map<String, String> liveHeld(List<String[]> records) {
        java.util.Map<String, String> live = new java.util.TreeMap<>();
        for (String[] r : records) {
            if (r[1] == null) {
                live.remove(r[0]);
            } else {
                live.put(r[0], r[1]);
            }
        }
        return live;
    }

    private static String text(byte[] b) {
        return new String(b, java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * The Redis mirror's writes a harness emitted, in order, after writing the keys of the users
     * that changed since the last flush (as the operator does before a checkpoint barrier).
     */
    public static List<MirrorWrite> mirrored(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h) {
        try {
            h.prepareSnapshotPreBarrier(0);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        List<MirrorWrite> out = new ArrayList<>();
        var side = h.getSideOutput(CappingFunction.MIRROR);
        if (side != null) {
            for (StreamRecord<MirrorWrite> r : side) {
                out.add(r.getValue());
            }
        }
        return out;
    }

    /**
     * The mirror writer's side of the harness's task (its job, subtask and attempt), for a test to
     * play Redis dropping, answering and confirming deletions; close it at the end.
     */
    public static WriterSide writerSide(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h) {
        var ctx = ((CappingOperator) h.getOperator()).getRuntimeContext();
        return new WriterSide(
                ctx.getJobInfo().getJobId().toString(),
                ctx.getTaskInfo().getIndexOfThisSubtask(),
                ctx.getTaskInfo().getAttemptNumber());
    }

    /** The deliveries a harness emitted, in order. */
    public static List<Delivery> deliveries(
            KeyedBroadcastOperatorTestHarness<?, ?, ?, Delivery> h) {
        List<Delivery> out = new ArrayList<>();
        for (Delivery d : h.extractOutputValues()) {
            if (!d.isHeldTopic()) {
                out.add(d);
            }
        }
        return out;
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        close();
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
