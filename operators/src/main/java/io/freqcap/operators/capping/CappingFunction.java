package io.freqcap.operators.capping;

import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.capping.decision.DecisionStep;
import io.freqcap.operators.capping.held.HeldCounts;
import io.freqcap.operators.capping.held.HeldMessages;
import io.freqcap.operators.capping.held.HoldNumbers;
import io.freqcap.operators.capping.held.Withdrawals;
import io.freqcap.operators.capping.outputs.CappingMetrics;
import io.freqcap.operators.capping.outputs.CappingOutputs;
import io.freqcap.operators.capping.outputs.MirrorDebt;
import io.freqcap.operators.capping.preference.PreferenceStore;
import io.freqcap.operators.capping.preference.UserInputs;
import io.freqcap.operators.capping.state.HistoryCache;
import io.freqcap.operators.capping.state.HistoryScans;
import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.operators.control.ControlHandler.Outcome;
import io.freqcap.operators.control.ControlInput;
import io.freqcap.operators.mirror.MirrorLink;
import io.freqcap.operators.mirror.RedisMirrorSink;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.history.StoredHistory;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.mirror.MirrorWrite;
import io.freqcap.schema.preference.UserPreferences;
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
 * Decided}, from the shared {@link DecisionStep}) goes to the main output now, into held state, or
 * to {@link #AUDIT}. Keyed by userId; malformed records arrive under negative keys and touch no
 * state. It only moves state in and out: the decision is {@link DecisionStep}'s, the commands that
 * take messages back are {@link Withdrawals}', the sweep and the mirror's rebuild {@link Upkeep}'s.
 * It runs in a {@link CappingOperator}, which lets it switch keys and keeps held messages' timers.
 *
 * <p>Control records (the broadcast input) are parsed by every parallel instance and applied by
 * version (a config replaces the one in force only if its version is higher), so instances agree
 * whatever order they see them in. Only instance 0 writes the INVALID_CONTROL audit record of a
 * control record that is not applied, so each is audited once.
 *
 * <p><b>State cleanup.</b> A periodic sweep ({@link ControlRecord.Kind#SWEEP}, broadcast to every
 * instance) clears the histories nothing can need any more: see {@link HistoryScans}.
 *
 * <p><b>History cache.</b> A {@link HistoryCache} of each instance holds the serialized histories
 * of recently seen users: a hit saves the RocksDB read (see docs/design.md). New histories stay in
 * the cache and reach keyed state in {@link #snapshotState}, which Flink calls before the keyed
 * state backend's snapshot, and before a sweep or a rebuild scans keyed state.
 *
 * <p><b>Redis mirror.</b> With the mirror on, every ALLOWED message also goes to {@link #MIRROR}
 * (for {@link RedisMirrorSink}), and histories keep messageIds, so that a {@code rebuild-mirror}
 * command can write every user's counted messages again (contract.md §7). Decisions never wait on
 * Redis.
 *
 * <p><b>Held messages.</b> A message ALLOWED with a later send time (a rule's {@code hold}) waits
 * in keyed state ({@link HeldMessages}) for a processing-time timer of its own at that time, or
 * goes out at once when the time has passed. {@code forget-user} turns it into a FORGOTTEN record,
 * {@code cancel-held} into a CANCELLED one; either way it stops counting (history, Redis). A user
 * may have {@code maxHeld} waiting. A message of a {@code preempt} rule may take the place of held
 * messages of lower priority ({@link DecisionStep}): they end as PREEMPTED records in the same
 * step, so a checkpoint has either both or neither. The control side's operator state is {@link
 * ControlInput}'s.
 *
 * <p><b>The user's say and the sender's word.</b> Records of the preferences and receipts topics
 * arrive on the keyed input too, under their user (contract.md §10, §11): {@link UserInputs} puts a
 * user's preferences in force ({@link PreferenceStore}, which every decision of that user reads)
 * and cancels the held messages they rule out, and un-counts a message whose delivery failed.
 */
public class CappingFunction
        extends KeyedBroadcastProcessFunction<Long, InboundMessage, ControlRecord, Delivery>
        implements CheckpointedFunction {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(CappingFunction.class);

    public static final OutputTag<AuditEvent> AUDIT = CappingOutputs.AUDIT;

    /** Counted messages for the Redis mirror (only when the mirror is on). */
    public static final OutputTag<MirrorWrite> MIRROR = CappingOutputs.MIRROR;

    /** Each user's history (keyed state, RocksDB): see {@link HistoryStore}. */
    public static final ValueStateDescriptor<StoredHistory> HISTORY = HistoryStore.STATE;

    private final CappingSettings settings;

    private transient ControlInput control;
    private transient HistoryStore histories;
    private transient HeldMessages held;
    private transient HeldCounts heldCounts;
    private transient HoldNumbers holdNumbers;
    private transient HeldMessages.Timers heldTimers;
    private transient DecisionStep step;
    private transient MirrorDebt mirrorDebt;
    private transient boolean auditsControl;
    private transient CappingMetrics metrics;
    private transient CappingOutputs outputs;
    private transient Withdrawals withdrawals;
    private transient PreferenceStore preferences;
    private transient UserInputs userInputs;
    private transient Upkeep upkeep;

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
        heldCounts = new HeldCounts(context.getOperatorStateStore());
        holdNumbers = new HoldNumbers(context.getOperatorStateStore());
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        upkeep.flush(); // before the keyed state backend takes its snapshot
        control.snapshot();
        mirrorDebt.snapshot();
        heldCounts.snapshot();
        holdNumbers.snapshot();
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        auditsControl = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0;
        if (settings.mirror()) {
            mirrorDebt.attach(
                    MirrorLink.acquire(
                            getRuntimeContext().getJobInfo().getJobId().toString(),
                            getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                            getRuntimeContext().getTaskInfo().getAttemptNumber()),
                    this::owns);
        }
        metrics = new CappingMetrics(getRuntimeContext().getMetricGroup(), control.handler());
        long maxHeap = Runtime.getRuntime().maxMemory();
        int slots = HistoryCache.slotsWithin(settings.historyCacheSlots(), maxHeap);
        if (slots < settings.historyCacheSlots()) {
            LOG.warn(
                    "History cache cut from {} to {} slots: at {} bytes a slot the {} MB heap of"
                            + " this TaskManager would not hold one for each slot's capping task;"
                            + " give TaskManagers more heap or set --history-cache",
                    settings.historyCacheSlots(),
                    slots,
                    HistoryCache.BYTES_PER_SLOT,
                    maxHeap >> 20);
        }
        if (keySetter == null) {
            throw new IllegalStateException(
                    "CappingFunction runs in a CappingOperator, which lets it switch keys");
        }
        histories =
                new HistoryStore(
                        new HistoryStore.States(
                                getRuntimeContext().getState(HISTORY),
                                getRuntimeContext().getState(HistoryStore.LONG),
                                getRuntimeContext().getMapState(HistoryStore.BUCKETS)),
                        keySetter,
                        slots,
                        metrics.cacheHits::inc,
                        settings.liveHistoryBytes());
        metrics.gauge("longHistories", histories::liveHistories);
        metrics.gauge("longHistoryEntries", histories::liveEntries);
        metrics.gauge("longHistoryBytes", histories::liveBytes);
        if (heldTimers == null) {
            throw new IllegalStateException(
                    "CappingFunction runs in a CappingOperator, which keeps held messages' timers");
        }
        heldCounts.open(
                getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks(),
                getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks(),
                getRuntimeContext().getTaskInfo().getIndexOfThisSubtask());
        held =
                new HeldMessages(
                        getRuntimeContext().getMapState(HeldMessages.STATE),
                        getRuntimeContext().getListState(HeldMessages.LEGACY),
                        heldCounts,
                        holdNumbers,
                        heldTimers);
        metrics.gauge("heldNow", held::heldNow);
        preferences = preferenceStore(getRuntimeContext().getState(PreferenceStore.STATE));
        metrics.gauge("usersWithPreferences", preferences::users);
        long ahead = settings.bounds().maxFuture().millis();
        step =
                new DecisionStep(
                        histories,
                        held,
                        preferences,
                        settings.mirror(),
                        // off: as far as the default bound, so every history stays bounded
                        ahead == Long.MAX_VALUE ? DecisionStep.AHEAD_MILLIS : ahead);
        outputs =
                new CappingOutputs(
                        metrics,
                        mirrorDebt,
                        settings.mirror(),
                        settings.bounds().maxRecordBytes(),
                        () -> control.config().longestWindowMillis());
        withdrawals =
                new Withdrawals(histories, held, keySetter, this::owns, this::eraseUser, outputs);
        userInputs = new UserInputs(histories, held, preferences, withdrawals, metrics, outputs);
        upkeep =
                new Upkeep(
                        histories,
                        control,
                        metrics,
                        () -> getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks(),
                        preferences::has);
    }

    @Override
    public void close() throws Exception {
        if (control != null) {
            control.close();
        }
        if (mirrorDebt != null) {
            mirrorDebt.release();
        }
        if (histories != null) {
            histories.close();
        }
        super.close();
    }

    /**
     * Called by {@link CappingOperator} before {@link #open}: how to switch the current key, which
     * the store needs to write histories it keeps in memory (at checkpoints, scans, evictions).
     */
    void useKeySetter(LongConsumer setCurrentKey) {
        this.keySetter = setCurrentKey;
    }

    /** Called by {@link CappingOperator} before {@link #open}: the held messages' timers. */
    void useHeldTimers(HeldMessages.Timers timers) {
        this.heldTimers = timers;
    }

    /** Held messages of this task now (the {@code heldNow} gauge; for tests). */
    long heldNow() {
        return held.heldNow();
    }

    /** Whether {@code user}'s key group is this task's. */
    private boolean owns(long user) {
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
        for (ControlInput.Applied a : control.applyLoaded()) {
            auditIfNotApplied(a, outputs.to(ctx));
        }
        long now = ctx.timerService().currentProcessingTime();
        if (!in.isMessage()) {
            userInputs.apply(in, now, outputs.to(ctx));
            return;
        }
        Decided d =
                step.decide(
                        in,
                        control.config(),
                        control.handler().segments(),
                        control.sweptHorizon(),
                        now);
        if (d.undecided()) {
            metrics.undecided.inc(); // the rule threw on it: see DecisionStep
        }
        metrics.decided(d);
        if (!d.preempted().isEmpty()) {
            // Their place is taken: their records, and Redis without them before the new write.
            for (AuditEvent a : d.preemptions(settings.bounds().maxRecordBytes())) {
                ctx.output(AUDIT, a);
            }
            outputs.to(ctx).mirror(d.mirrorRemoval());
        }
        switch (d.route()) {
            case AUDIT -> ctx.output(AUDIT, d.audit(settings.bounds().maxRecordBytes()));
            case NOW -> out.collect(d.delivery());
            case LATER -> held.hold(d.message().userId(), d.heldDelivery());
        }
        MirrorWrite w = d.mirrorWrite();
        if (w != null) {
            outputs.to(ctx).mirror(w);
        }
    }

    /**
     * Called by {@link CappingOperator} when a held message's timer fires, its user the current
     * key: delivers it, unless it was withdrawn meanwhile.
     */
    void releaseHeld(long user, long sendAt, long fingerprint, Consumer<Delivery> out)
            throws Exception {
        HeldDelivery h = held.release(user, sendAt, fingerprint);
        if (h != null) {
            metrics.released.inc();
            out.accept(h.delivery());
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
        int n = held.releaseLegacyDue(now, h -> out.collect(h.delivery()));
        metrics.released.inc(n);
    }

    /**
     * Called by {@link CappingOperator} once open, keyed state restored: counts the messages
     * freqcap 0.3 held in lists, if the state has any (for the {@code heldNow} gauge), and finds
     * the users with preferences.
     */
    void loadRestored(KeyedStateBackend<Long> backend) throws Exception {
        held.countLegacy(backend, keySetter);
        preferences.load(backend);
    }

    @Override
    public void processBroadcastElement(ControlRecord rec, Context ctx, Collector<Delivery> out)
            throws Exception {
        CappingOutputs.Sink sink = outputs.to(ctx);
        if (settings.mirror()) {
            mirrorDebt.payIfDue(() -> upkeep.rebuildMirror(ctx, sink));
        }
        switch (rec.kind()) {
            case SWEEP:
                upkeep.sweep(ctx);
                return;
            case MIRROR_TICK:
                return;
            default:
                break;
        }
        for (ControlInput.Applied a : control.take(rec)) {
            if (a.outcome() instanceof Outcome.ForgetUser f) {
                withdrawals.forgetUser(f.userId(), a.record(), sink);
            } else if (a.outcome() instanceof Outcome.CancelHeld c) {
                withdrawals.cancelHeld(
                        c, a.record(), users -> heldUsers(ctx, users), auditsControl, sink);
            } else if (a.outcome() instanceof Outcome.Command) {
                if (settings.mirror()) {
                    upkeep.rebuildMirror(ctx, sink);
                } else {
                    LOG.info("rebuild-mirror received; this job runs without a Redis mirror");
                }
            } else {
                auditIfNotApplied(a, sink);
            }
        }
    }

    /** Audits a control record not applied: only instance 0 does, so each is audited once. */
    private void auditIfNotApplied(ControlInput.Applied a, CappingOutputs.Sink sink) {
        if (a.outcome() instanceof Outcome.NotApplied n && auditsControl) {
            sink.notApplied(a.record(), n.error());
        }
    }

    /** Every user of this instance with held messages (0.3's lists included). */
    private static void heldUsers(Context ctx, LongConsumer users) throws Exception {
        ctx.applyToKeyedState(HeldMessages.STATE, (user, state) -> users.accept(user));
        ctx.applyToKeyedState(HeldMessages.LEGACY, (user, state) -> users.accept(user));
    }

    /** The users' preferences over their keyed state. Package-private: tests inject faults. */
    PreferenceStore preferenceStore(ValueState<UserPreferences> state) {
        return new PreferenceStore(state);
    }

    /**
     * The user's history and preferences erased; the channels the history held. Package-private:
     * tests inject faults.
     */
    String[] eraseUser(long user) throws Exception {
        preferences.clear(user);
        return histories.forget(user);
    }
}
