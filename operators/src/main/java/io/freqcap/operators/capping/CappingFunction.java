package io.freqcap.operators.capping;

import io.freqcap.operators.capping.controlstate.ControlInput;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.capping.decision.DecisionStep;
import io.freqcap.operators.capping.decision.Stores;
import io.freqcap.operators.capping.held.HeldBooks;
import io.freqcap.operators.capping.held.HeldMessages;
import io.freqcap.operators.capping.held.HeldSide;
import io.freqcap.operators.capping.held.HeldTopicStart;
import io.freqcap.operators.capping.outputs.CappingOutputs;
import io.freqcap.operators.capping.outputs.MirrorDebt;
import io.freqcap.operators.capping.outputs.MirrorLogs;
import io.freqcap.operators.capping.preference.PreferenceInputs;
import io.freqcap.operators.capping.preference.PreferenceStore;
import io.freqcap.operators.capping.receipt.ReceiptInputs;
import io.freqcap.operators.capping.state.HistoryCache;
import io.freqcap.operators.capping.state.HistoryScans;
import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.operators.mirror.MirrorLink;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.history.StoredHistory;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.mirror.MirrorWrite;
import io.freqcap.schema.preference.PreferenceRecord;
import io.freqcap.schema.preference.UserPreferences;
import io.freqcap.schema.receipt.DeliveryReceipt;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides every input record exactly once (contract.md §5): each record's one outcome ({@link
 * Decided}, a value from the shared {@link DecisionStep}) is written into state by {@link
 * Stores#apply} and sent by {@link CappingOutputs.Sink#decided}: to the main output now, to {@link
 * #AUDIT}, or held for later (package {@code held}). Keyed by userId; malformed records arrive
 * under negative keys and touch no state. It only moves state in and out: records of the
 * preferences and receipts topics are {@link PreferenceInputs}' and {@link ReceiptInputs}', control
 * records {@link Upkeep}'s. It runs in a {@link CappingOperator}, which lets it switch keys and
 * keeps held messages' timers.
 *
 * <p><b>State.</b> Histories live in RocksDB behind a {@link HistoryCache} ({@link HistoryStore});
 * new ones reach keyed state in {@link #snapshotState}, which Flink calls before the keyed state
 * backend's snapshot, and before a sweep or a rebuild scans keyed state. A periodic sweep clears
 * the histories nothing can need any more ({@link HistoryScans}). With the Redis mirror on,
 * histories keep messageIds, so that {@code rebuild-mirror} can write every user's counted messages
 * again (contract.md §7).
 */
public class CappingFunction
        extends KeyedBroadcastProcessFunction<Long, InboundMessage, ControlRecord, Delivery>
        implements CheckpointedFunction, CappingTask {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(CappingFunction.class);

    public static final OutputTag<AuditEvent> AUDIT = CappingOutputs.AUDIT;

    /** Counted messages for the Redis mirror (only when the mirror is on). */
    public static final OutputTag<MirrorWrite> MIRROR = CappingOutputs.MIRROR;

    /** Each user's history (keyed state, RocksDB): see {@link HistoryStore}. */
    public static final ValueStateDescriptor<StoredHistory> HISTORY = HistoryStore.STATE;

    private final CappingSettings settings;

    private transient ControlInput control;
    private transient MirrorDebt mirrorDebt;
    private transient HeldBooks heldBooks;
    private transient HeldTopicStart heldTopicStart;
    private transient HeldMessages.Timers heldTimers;
    private transient CappingParts parts;

    /** Set by {@link CappingOperator}: histories are then written to keyed state at checkpoints. */
    private transient LongConsumer keySetter;

    public CappingFunction(CappingSettings settings) {
        this.settings = settings;
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        control =
                new ControlInput(
                        context.getOperatorStateStore(),
                        settings.controlStart(),
                        context.isRestored());
        mirrorDebt = new MirrorDebt(context.getOperatorStateStore());
        heldBooks = HeldBooks.restore(context.getOperatorStateStore(), context.isRestored());
        heldTopicStart = new HeldTopicStart(settings.heldTopic(), context.isRestored());
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        parts.upkeep.flush(); // before the keyed state backend takes its snapshot
        control.snapshot();
        mirrorDebt.snapshot();
        heldBooks.snapshot();
        if (parts.outputs.notices() != null) {
            parts.outputs.notices().checkpointed();
        }
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        if (keySetter == null || heldTimers == null) {
            throw new IllegalStateException(
                    "CappingFunction runs in a CappingOperator, which lets it switch keys and"
                            + " keeps held messages' timers");
        }
        if (settings.mirror()) {
            mirrorDebt.attach(
                    MirrorLink.acquire(
                            getRuntimeContext().getJobInfo().getJobId().toString(),
                            getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                            getRuntimeContext().getTaskInfo().getAttemptNumber()),
                    this::owns,
                    getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks());
        }
        parts =
                new CappingParts(
                        settings,
                        getRuntimeContext(),
                        new CappingParts.Restored(control, mirrorDebt, heldBooks, heldTopicStart),
                        new CappingParts.Hooks(
                                keySetter,
                                heldTimers,
                                this::owns,
                                this::preferenceStore,
                                this::eraseUser));
    }

    @Override
    public void close() throws Exception {
        if (control != null) {
            control.close();
        }
        if (mirrorDebt != null) {
            mirrorDebt.release();
        }
        if (parts != null) {
            parts.histories.close();
            parts.lifetimes.close();
        }
        if (heldTopicStart != null) {
            heldTopicStart.close();
        }
        super.close();
    }

    /**
     * Called by {@link CappingOperator} before {@link #open}: how to switch the current key, which
     * the store needs to write histories it keeps in memory (at checkpoints, scans, evictions).
     */
    @Override
    public void useKeySetter(LongConsumer setCurrentKey) {
        this.keySetter = setCurrentKey;
    }

    /** Called by {@link CappingOperator} before {@link #open}: the held messages' timers. */
    @Override
    public void useHeldTimers(HeldMessages.Timers timers) {
        this.heldTimers = timers;
    }

    /**
     * Called by {@link CappingOperator} (a timer, before a checkpoint barrier, at the end of input,
     * when many users wait): writes the Redis key of every user whose counted messages changed
     * since ({@link MirrorLogs}), each user made the current key in turn.
     */
    @Override
    public void flushMirror(Consumer<MirrorWrite> out) throws Exception {
        parts.outputs.flushLogs(
                user -> {
                    keySetter.accept(user);
                    return parts.histories.get(user);
                },
                out);
    }

    /** Whether the Redis mirror is on. */
    @Override
    public boolean mirrorOn() {
        return settings.mirror();
    }

    /** Users whose Redis key waits to be written (0 with the mirror off). */
    @Override
    public int mirrorPending() {
        return parts.mirrorLogs == null ? 0 : parts.mirrorLogs.pending();
    }

    /** Whether {@code user}'s key group is this task's. */
    @Override
    public boolean owns(long user) {
        int maxParallelism = getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks();
        int parallelism = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
        int self = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        return KeyGroupRangeAssignment.assignKeyToParallelOperator(
                        user, maxParallelism, parallelism)
                == self;
    }

    @Override
    public void processElement(InboundMessage in, ReadOnlyContext ctx, Collector<Delivery> out)
            throws Exception {
        // one per record: this is the hot path
        CappingOutputs.Sink sink = parts.outputs.to(ctx, out::collect);
        parts.upkeep.applyLoaded(sink);
        long now = ctx.timerService().currentProcessingTime();
        if (!in.isMessage()) {
            sink.input(in, () -> applyInput(in, now, sink));
            return;
        }
        parts.decide(in, control, now, sink);
    }

    /** A record of the preferences or receipts topic, keyed by its user. */
    private void applyInput(InboundMessage in, long now, CappingOutputs.Sink sink)
            throws Exception {
        if (in.kind() == InboundMessage.Kind.PREFERENCE) {
            parts.preferenceInputs.apply(PreferenceRecord.read(in.key(), in.value()), now, sink);
        } else {
            parts.receiptInputs.apply(
                    in.routingKey(), DeliveryReceipt.parse(in.value()), now, sink);
        }
    }

    /**
     * A timer of freqcap 0.3 (no namespace): delivers the current user's messages held in its list
     * whose send time the wall clock has reached.
     */
    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Delivery> out)
            throws Exception {
        long now = Math.max(timestamp, ctx.timerService().currentProcessingTime());
        parts.heldSide.releaseLegacyDue(now, parts.outputs.to(ctx, out::collect));
    }

    /**
     * Called by {@link CappingOperator} once open, keyed state restored: counts the messages
     * freqcap 0.3 held in lists, if the state has any (for the {@code heldNow} gauge), and finds
     * the users with preferences, with a last engagement and with lifetime counts.
     */
    @Override
    public void loadRestored(KeyedStateBackend<Long> backend) throws Exception {
        parts.heldSide.load(backend);
        parts.preferences.load(backend);
        parts.engagements.load(backend);
        parts.lifetimes.load(backend);
    }

    /** What it wired once open (tests read its stores). */
    CappingParts parts() {
        return parts;
    }

    /** Called by {@link CappingOperator}: held messages' timers, notices and the held topic. */
    @Override
    public HeldSide heldSide() {
        return parts.heldSide;
    }

    /** Whether this is task 0. */
    @Override
    public boolean first() {
        return getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0;
    }

    @Override
    public void processBroadcastElement(ControlRecord rec, Context ctx, Collector<Delivery> out)
            throws Exception {
        parts.upkeep.control(rec, ctx, parts.outputs.to(ctx, out::collect));
    }

    /** The users' preferences over their keyed state. Package-private: tests inject faults. */
    protected PreferenceStore preferenceStore(ValueState<UserPreferences> state) {
        return new PreferenceStore(state);
    }

    /**
     * The user's history, preferences and last engagement erased; the channels the history held.
     * Package-private: tests inject faults.
     */
    protected String[] eraseUser(long user) throws Exception {
        parts.preferences.clear(user);
        parts.engagements.clear(user);
        return parts.histories.forget(user);
    }
}
