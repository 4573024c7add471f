package io.freqcap.operators.capping;

import io.freqcap.operators.capping.control.ControlInput;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.capping.decision.DecisionStep;
import io.freqcap.operators.capping.decision.Stores;
import io.freqcap.operators.capping.fatigue.EngagementStore;
import io.freqcap.operators.capping.held.HeldBooks;
import io.freqcap.operators.capping.held.HeldMessages;
import io.freqcap.operators.capping.held.HeldTopicStart;
import io.freqcap.operators.capping.held.Withdrawals;
import io.freqcap.operators.capping.outputs.CappingMetrics;
import io.freqcap.operators.capping.outputs.CappingOutputs;
import io.freqcap.operators.capping.outputs.HeldNotices;
import io.freqcap.operators.capping.outputs.MirrorDebt;
import io.freqcap.operators.capping.outputs.MirrorLogs;
import io.freqcap.operators.capping.preference.PreferenceStore;
import io.freqcap.operators.capping.preference.UserInputs;
import io.freqcap.operators.capping.state.HistoryCache;
import io.freqcap.operators.capping.state.HistoryScans;
import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.operators.mirror.MirrorLink;
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
 * Decided}, a value from the shared {@link DecisionStep}) is written into state by {@link
 * Stores#apply} and sent by {@link CappingOutputs.Sink#decided}: to the main output now, to {@link
 * #AUDIT}, or held for later (package {@code held}). Keyed by userId; malformed records arrive
 * under negative keys and touch no state. It only moves state in and out: records of the
 * preferences and receipts topics are {@link UserInputs}', control records {@link Upkeep}'s. It
 * runs in a {@link CappingOperator}, which lets it switch keys and keeps held messages' timers.
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
    private transient HeldBooks heldBooks;
    private transient HeldTopicStart heldTopicStart;
    private transient HeldMessages.Timers heldTimers;
    private transient Stores stores;
    private transient DecisionStep step;
    private transient MirrorDebt mirrorDebt;
    private transient MirrorLogs mirrorLogs;
    private transient CappingMetrics metrics;
    private transient CappingOutputs outputs;
    private transient Withdrawals withdrawals;
    private transient PreferenceStore preferences;
    private transient EngagementStore engagements;
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
        heldBooks = HeldBooks.restore(context.getOperatorStateStore(), context.isRestored());
        heldTopicStart = new HeldTopicStart(settings.heldTopic(), context.isRestored());
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        upkeep.flush(); // before the keyed state backend takes its snapshot
        control.snapshot();
        mirrorDebt.snapshot();
        heldBooks.snapshot();
        if (outputs.notices() != null) {
            outputs.notices().checkpointed();
        }
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        if (settings.mirror()) {
            mirrorDebt.attach(
                    MirrorLink.acquire(
                            getRuntimeContext().getJobInfo().getJobId().toString(),
                            getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                            getRuntimeContext().getTaskInfo().getAttemptNumber()),
                    this::owns,
                    getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks());
            mirrorDebt.windowChanged(control.config().longestWindowMillis());
        }
        metrics = new CappingMetrics(getRuntimeContext().getMetricGroup(), control.handler());
        mirrorLogs = settings.mirror() ? new MirrorLogs() : null;
        if (keySetter == null) {
            throw new IllegalStateException(
                    "CappingFunction runs in a CappingOperator, which lets it switch keys");
        }
        histories =
                new HistoryStore(
                        HistoryStore.States.of(getRuntimeContext()),
                        keySetter,
                        HistoryStore.cacheSlots(settings.historyCacheSlots()),
                        metrics.cacheHits::inc,
                        settings.liveHistoryBytes());
        metrics.gauge("longHistories", histories::liveHistories);
        metrics.gauge("longHistoryEntries", histories::liveEntries);
        metrics.gauge("longHistoryBytes", histories::liveBytes);
        if (heldTimers == null) {
            throw new IllegalStateException(
                    "CappingFunction runs in a CappingOperator, which keeps held messages' timers");
        }
        held = heldBooks.open(getRuntimeContext(), heldTimers);
        metrics.gauge("heldNow", held::heldNow);
        metrics.heldDue(held::due, held::dueFrom);
        preferences = preferenceStore(getRuntimeContext().getState(PreferenceStore.STATE));
        metrics.gauge("usersWithPreferences", preferences::users);
        long ahead = settings.bounds().maxFuture().millis();
        engagements = new EngagementStore(getRuntimeContext().getState(EngagementStore.STATE));
        stores = new Stores(histories, held, preferences, engagements);
        step =
                new DecisionStep(
                        stores,
                        settings.mirror(),
                        // off: as far as the default bound, so every history stays bounded
                        ahead == Long.MAX_VALUE ? DecisionStep.AHEAD_MILLIS : ahead);
        outputs =
                new CappingOutputs(
                        metrics,
                        mirrorDebt,
                        mirrorLogs,
                        settings.bounds().maxRecordBytes(),
                        () -> control.config().longestWindowMillis(),
                        settings.heldTopic() == null
                                ? null
                                : new HeldNotices(
                                        metrics.heldNotices,
                                        settings.bounds().maxRecordBytes(),
                                        () -> control.config().timezone(),
                                        settings.heldTopic().transactional()));
        withdrawals =
                new Withdrawals(histories, held, keySetter, this::owns, this::eraseUser, outputs);
        userInputs =
                new UserInputs(
                        stores,
                        histories,
                        held,
                        preferences,
                        withdrawals,
                        metrics,
                        outputs,
                        settings.bounds().maxFuture());
        upkeep =
                new Upkeep(
                        histories,
                        control,
                        withdrawals,
                        metrics,
                        settings.mirror() ? mirrorDebt : null,
                        getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0,
                        () -> getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks(),
                        preferences::has,
                        engagements);
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
        if (heldTopicStart != null) {
            heldTopicStart.close();
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

    /**
     * Called by {@link CappingOperator} (a timer, before a checkpoint barrier, at the end of input,
     * when many users wait): writes the Redis key of every user whose counted messages changed
     * since ({@link MirrorLogs}), each user made the current key in turn.
     */
    void flushMirror(Consumer<MirrorWrite> out) throws Exception {
        outputs.flushLogs(
                user -> {
                    keySetter.accept(user);
                    return histories.get(user);
                },
                out);
    }

    /** Whether the Redis mirror is on. */
    boolean mirrorOn() {
        return settings.mirror();
    }

    /** Users whose Redis key waits to be written (0 with the mirror off). */
    int mirrorPending() {
        return mirrorLogs == null ? 0 : mirrorLogs.pending();
    }

    /** Held messages of this task now (the {@code heldNow} gauge; for tests). */
    long heldNow() {
        return held.heldNow();
    }

    /** The {@code heldDue} gauge of {@code hoursAhead} (for tests). */
    long heldDue(long now, int hoursAhead) {
        return hoursAhead < CappingMetrics.HELD_DUE_HOURS
                ? held.due(now, hoursAhead)
                : held.dueFrom(now, hoursAhead);
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
        // one per record: this is the hot path
        CappingOutputs.Sink sink = outputs.to(ctx, out::collect);
        upkeep.applyLoaded(sink);
        long now = ctx.timerService().currentProcessingTime();
        if (!in.isMessage()) {
            userInputs.apply(in, now, sink);
            return;
        }
        Decided d =
                step.decide(
                        in,
                        control.config(),
                        control.handler().segments(),
                        control.sweptHorizon(),
                        now);
        HeldDelivery kept;
        CappingOutputs.Prepared records;
        try {
            // Its records built before anything is written: most defects then leave no trace.
            records = sink.prepare(d);
            kept = stores.apply(d);
        } catch (RuntimeException e) {
            // The last guard (contract.md §5): a defect on a value at some edge while building or
            // writing what was decided, before anything of it went out. Audited, not fatal: a
            // restart would meet the same record again, forever. What the state took of it before
            // the defect stays (a message may stay counted: fewer sends, never more).
            LOG.error("Message {} could not be decided; audited as MALFORMED", in, e);
            sink.decided(
                    Decided.malformed(
                            in.undecided(DecisionStep.UNDECIDED + e.getClass().getSimpleName()),
                            control.config()));
            return;
        }
        // Outside the guard: a sink's failure (Kafka's) must fail the task, never be audited.
        sink.emit(records);
        if (kept != null) {
            sink.held(kept);
        }
    }

    /**
     * Called by {@link CappingOperator} when a held message's timer fires, its user the current
     * key: delivers it, unless it was withdrawn meanwhile.
     */
    void releaseHeld(
            long user,
            long sendAt,
            long fingerprint,
            Consumer<Delivery> out,
            Consumer<AuditEvent> audits)
            throws Exception {
        HeldDelivery h;
        try {
            h = held.release(user, sendAt, fingerprint);
        } catch (RuntimeException e) {
            // A defect reading what waits: failing the task would meet this timer again after
            // every restore. The job goes on and the log says which message; it may stay in
            // state without its timer (counted in heldNow).
            LOG.error(
                    "The held message of user {} due at {} (messageId fingerprint {}) could not"
                            + " be released",
                    user,
                    sendAt,
                    fingerprint,
                    e);
            metrics.undecided.inc();
            return;
        }
        if (h != null) {
            // Outside the guard: a sink's failure must fail the task.
            metrics.released.inc();
            outputs.to(audits, w -> {}, out).released(h);
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
        CappingOutputs.Sink sink = outputs.to(ctx, out::collect);
        int n = held.releaseLegacyDue(now, sink::released);
        metrics.released.inc(n);
    }

    /**
     * Called by {@link CappingOperator} once open, keyed state restored: counts the messages
     * freqcap 0.3 held in lists, if the state has any (for the {@code heldNow} gauge), and finds
     * the users with preferences and with a last engagement.
     */
    void loadRestored(KeyedStateBackend<Long> backend) throws Exception {
        held.countLegacy(backend, keySetter);
        held.countHours(backend, keySetter);
        preferences.load(backend);
        engagements.load(backend);
    }

    /**
     * Called by {@link CappingOperator} after the start, now and then until it returns false: the
     * keys that transactions open at the start committed since, written again as held now ({@link
     * HeldTopicStart#followUp}).
     */
    boolean followHeldTopic(Consumer<AuditEvent> audits, Consumer<Delivery> deliveries)
            throws Exception {
        return heldTopicStart.followUp(held, keySetter, outputs.to(audits, w -> {}, deliveries));
    }

    /**
     * Called by {@link CappingOperator} before each checkpoint's barrier and at the end of input:
     * the notices of the messages held since the last barrier ({@link HeldNotices#flush}).
     */
    void flushNotices(Consumer<AuditEvent> audits, Consumer<Delivery> deliveries) {
        if (outputs.notices() != null) {
            outputs.notices().flush(audits, deliveries);
        }
    }

    /**
     * Called by {@link CappingOperator} once loaded, before any record: makes the held topic whole
     * where this start must ({@link HeldTopicStart}).
     */
    void startHeldTopic(
            KeyedStateBackend<Long> backend,
            Consumer<AuditEvent> audits,
            Consumer<Delivery> deliveries)
            throws Exception {
        heldTopicStart.makeWhole(
                backend,
                held,
                this::owns,
                getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0,
                keySetter,
                outputs.to(audits, w -> {}, deliveries));
    }

    @Override
    public void processBroadcastElement(ControlRecord rec, Context ctx, Collector<Delivery> out)
            throws Exception {
        upkeep.control(rec, ctx, outputs.to(ctx, out::collect));
    }

    /** The users' preferences over their keyed state. Package-private: tests inject faults. */
    PreferenceStore preferenceStore(ValueState<UserPreferences> state) {
        return new PreferenceStore(state);
    }

    /**
     * The user's history, preferences and last engagement erased; the channels the history held.
     * Package-private: tests inject faults.
     */
    String[] eraseUser(long user) throws Exception {
        preferences.clear(user);
        engagements.clear(user);
        return histories.forget(user);
    }
}
