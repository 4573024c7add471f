package io.freqcap.operators.capping;

import io.freqcap.operators.capping.controlstate.ControlState;
import io.freqcap.operators.capping.held.HeldMessages;
import io.freqcap.operators.capping.outputs.CappingOutputs;
import io.freqcap.operators.capping.outputs.MirrorLogs;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import java.util.List;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.streaming.api.operators.InternalTimerService;
import org.apache.flink.streaming.api.operators.Triggerable;
import org.apache.flink.streaming.api.operators.co.CoBroadcastWithKeyedOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;

/**
 * Flink's keyed-broadcast operator around a {@link CappingFunction} (what it asks of it: {@link
 * CappingTask}), which may then keep new histories in its cache and write them to keyed state at
 * the next checkpoint, sorted: the function cannot switch the current key itself, the operator can.
 * The function writes them in {@code snapshotState}, which Flink calls before the keyed state
 * backend takes its snapshot, and before every scan of keyed state (sweep, rebuild-mirror).
 *
 * <p>Why an {@code @Internal} operator: Flink's public API gives a keyed-broadcast function no way
 * to switch the current key (it can only visit every key of a state), and write-back needs one.
 * This is the one place freqcap builds on Flink internals; every operator test (CappingHarnesses),
 * the state compatibility tests and every job run through it, so a Flink upgrade that changes it
 * fails them, and the function refuses to open anywhere else.
 *
 * <p>It also keeps the held messages' timers ({@code held-timers}): one per held message, at its
 * send time, its namespace the message's fingerprint, so that a release reads only the message due.
 * Flink's public timer service has no namespaces. Timers of freqcap 0.3's held lists (in the
 * function's own timer service) still fire there.
 */
public class CappingOperator
        extends CoBroadcastWithKeyedOperator<Long, InboundMessage, ControlRecord, Delivery> {
    private static final long serialVersionUID = 1L;

    public <
                    F extends
                            KeyedBroadcastProcessFunction<
                                            Long, InboundMessage, ControlRecord, Delivery>
                                    & CappingTask>
            CappingOperator(F function) {
        super(function, List.of(ControlState.SEGMENTS));
    }

    private CappingTask task() {
        return (CappingTask) userFunction;
    }

    @Override
    public void open() throws Exception {
        // Before the function's open, which builds its history store with it; keyed state is
        // ready by then (initializeState runs first).
        CappingTask function = task();
        function.useKeySetter(user -> setCurrentKey(user));
        InternalTimerService<Long> timers =
                getInternalTimerService("held-timers", LongSerializer.INSTANCE, new Release());
        function.useHeldTimers(
                new HeldMessages.Timers() {
                    @Override
                    public void register(long sendAt, long fingerprint) {
                        timers.registerProcessingTimeTimer(fingerprint, sendAt);
                    }

                    @Override
                    public void delete(long sendAt, long fingerprint) {
                        timers.deleteProcessingTimeTimer(fingerprint, sendAt);
                    }
                });
        super.open();
        if (function.mirrorOn()) {
            scheduleMirrorFlush();
        }
        function.loadRestored(getKeyedStateBackend());
        function.heldSide()
                .start(
                        getKeyedStateBackend(),
                        function::owns,
                        function.first(),
                        this::audit,
                        d -> output.collect(new StreamRecord<>(d)));
        scheduleHeldFollow();
    }

    /** How often the held topic's follow after a start is polled. */
    public static final long FOLLOW_MILLIS = 200;

    /** Polls the held topic's follow after the start until it is done ({@link HeldTopicStart}). */
    private void scheduleHeldFollow() throws Exception {
        ProcessingTimeService timers = getProcessingTimeService();
        if (!followHeldTopic()
                || timers.getCurrentProcessingTime() > Long.MAX_VALUE - FOLLOW_MILLIS) {
            return; // done; or a clock at its end (a test's), where a timer would fire forever
        }
        timers.registerTimer(
                timers.getCurrentProcessingTime() + FOLLOW_MILLIS, time -> scheduleHeldFollow());
    }

    private boolean followHeldTopic() throws Exception {
        return task().heldSide().follow(this::audit, d -> output.collect(new StreamRecord<>(d)));
    }

    /** Every {@link MirrorLogs#FLUSH_MILLIS}: the Redis keys of the users that changed. */
    private void scheduleMirrorFlush() {
        ProcessingTimeService timers = getProcessingTimeService();
        if (timers.getCurrentProcessingTime() > Long.MAX_VALUE - MirrorLogs.FLUSH_MILLIS) {
            // A clock at its end (a test's): a timer there would fire again at once, forever.
            // Barriers and the end of input still flush.
            return;
        }
        timers.registerTimer(
                timers.getCurrentProcessingTime() + MirrorLogs.FLUSH_MILLIS,
                time -> {
                    flushMirror();
                    scheduleMirrorFlush();
                });
    }

    private void flushMirror() throws Exception {
        task().flushMirror(w -> output.collect(CappingOutputs.MIRROR, new StreamRecord<>(w)));
    }

    @Override
    public void processElement1(StreamRecord<InboundMessage> element) throws Exception {
        super.processElement1(element);
        if (task().mirrorPending() >= MirrorLogs.MAX_PENDING) {
            flushMirror();
        }
    }

    /** What changed reaches the mirror's writer before the barrier: its backlog is checkpointed. */
    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        flushNotices();
        flushMirror();
        super.prepareSnapshotPreBarrier(checkpointId);
    }

    @Override
    public void finish() throws Exception {
        followHeldTopic(); // what was read of it so far
        flushNotices();
        flushMirror();
        super.finish();
    }

    /** The held topic's notices of this checkpoint, before its barrier. */
    private void flushNotices() {
        task().heldSide().flushNotices(this::audit, d -> output.collect(new StreamRecord<>(d)));
    }

    private void audit(AuditEvent a) {
        output.collect(CappingOutputs.AUDIT, new StreamRecord<>(a));
    }

    /** A held message's timer: the function delivers it (its user is the current key). */
    private final class Release implements Triggerable<Long, Long> {
        @Override
        public void onEventTime(InternalTimer<Long, Long> timer) {}

        @Override
        public void onProcessingTime(InternalTimer<Long, Long> timer) throws Exception {
            task().heldSide()
                    .release(
                            timer.getKey(),
                            timer.getTimestamp(),
                            timer.getNamespace(),
                            d -> output.collect(new StreamRecord<>(d)),
                            CappingOperator.this::audit);
        }
    }
}
