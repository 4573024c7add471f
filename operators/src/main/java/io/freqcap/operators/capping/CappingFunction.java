package io.freqcap.operators.capping;

import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.capping.decision.DecisionStep;
import io.freqcap.operators.capping.rule.CappingRule;
import io.freqcap.operators.capping.state.HistoryCache;
import io.freqcap.operators.capping.state.HistoryScans;
import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.operators.control.ControlHandler;
import io.freqcap.operators.control.ControlHandler.Outcome;
import io.freqcap.operators.mirror.MirrorLink;
import io.freqcap.operators.mirror.RedisMirrorSink;
import io.freqcap.operators.segments.SegmentLoads;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.AuditRecords;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.history.StoredHistory;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.BroadcastState;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides every input record exactly once (contract.md §5): ALLOWED and EXEMPT go to the main
 * output, everything else to {@link #AUDIT}. Keyed by userId; malformed records arrive under
 * negative keys and touch no state.
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
 * of recently seen users: a hit saves the RocksDB read (see docs/design.md). Run by a {@link
 * CappingOperator} (as the job does), new histories stay in the cache and reach keyed state in
 * {@link #snapshotState}, which Flink calls before the keyed state backend's snapshot, and before a
 * sweep or a rebuild scans keyed state; run by Flink's plain keyed-broadcast operator, the cache is
 * written through.
 *
 * <p><b>Redis mirror.</b> With the mirror on, every ALLOWED message also goes to {@link #MIRROR}
 * (for {@link RedisMirrorSink}), and histories keep messageIds, so that a {@code rebuild-mirror}
 * command can write every user's counted messages again (contract.md §7). Decisions never wait on
 * Redis.
 *
 * <p>Why it is the longest operator class: it is the one place where state meets Flink (restore,
 * snapshot, control records, sweep, forget-user, the mirror's rebuild); each of those is a few
 * lines around a plain-Java call.
 */
public class CappingFunction
        extends KeyedBroadcastProcessFunction<Long, InboundMessage, ControlRecord, Delivery>
        implements CheckpointedFunction {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(CappingFunction.class);

    public static final OutputTag<AuditEvent> AUDIT =
            new OutputTag<>("capping-audit", TypeInformation.of(AuditEvent.class));

    /** Counted messages for the Redis mirror (only when the mirror is on). */
    public static final OutputTag<MirrorWrite> MIRROR =
            new OutputTag<>("redis-mirror", TypeInformation.of(MirrorWrite.class));

    /** Each user's history (keyed state, RocksDB): see {@link HistoryStore}. */
    public static final ValueStateDescriptor<StoredHistory> HISTORY = HistoryStore.STATE;

    /**
     * The config in force, as JSON text. Union list state: every instance holds the same config,
     * and after a restore (at any parallelism) each takes the highest version it finds, so neither
     * a rescale nor a restart with an older {@code --limits} can lower the version in force.
     */
    public static final ListStateDescriptor<String> CONFIG_IN_FORCE =
            new ListStateDescriptor<>("limit-config-v1", Types.STRING);

    /**
     * The swept horizon: messages older than this are STALE, since a sweep of this job cleared
     * histories they might need (see {@link #sweep}). Union list state: after a restore, at any
     * parallelism, each instance takes the highest, which is safe for every key group.
     */
    public static final ListStateDescriptor<Long> SWEPT_HORIZON =
            new ListStateDescriptor<>("swept-horizon-v1", Types.LONG);

    private final CappingSettings settings;

    private transient ControlHandler control;
    private transient HistoryStore histories;
    private transient DecisionStep step;
    private transient ListState<String> configState;
    private transient ListState<Long> horizonState;
    private transient long sweptHorizon;
    private transient BroadcastState<String, String> segmentsState;
    private transient BroadcastState<Integer, String> waitingState;
    private transient SegmentLoads loads;
    private transient MirrorDebt mirrorDebt;
    private transient boolean auditsControl;
    private transient CappingMetrics metrics;

    /** Set by {@link CappingOperator}: histories are then written to keyed state at checkpoints. */
    private transient java.util.function.LongConsumer keySetter;

    public CappingFunction(CappingSettings settings) {
        this.settings = settings;
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        configState = context.getOperatorStateStore().getUnionListState(CONFIG_IN_FORCE);
        horizonState = context.getOperatorStateStore().getUnionListState(SWEPT_HORIZON);
        sweptHorizon = Long.MIN_VALUE;
        for (Long h : horizonState.get()) {
            sweptHorizon = Math.max(sweptHorizon, h);
        }
        BroadcastState<String, String> held =
                context.getOperatorStateStore().getBroadcastState(ControlState.SEGMENTS);
        segmentsState = held;
        waitingState = context.getOperatorStateStore().getBroadcastState(ControlState.WAITING);
        loads = new SegmentLoads(settings.bounds().segmentLoader(), Thread::sleep);
        java.util.TreeMap<Integer, String> waiting = new java.util.TreeMap<>();
        for (Map.Entry<Integer, String> e : waitingState.entries()) {
            waiting.put(e.getKey(), e.getValue());
        }
        loads.restore(waiting.values());
        Map<String, String> descriptors = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : held.entries()) {
            descriptors.put(e.getKey(), e.getValue());
        }
        control =
                ControlHandler.start(
                        settings.initialConfig(),
                        configState.get(),
                        descriptors,
                        settings.initialSegmentsJson() == null
                                ? List.of()
                                : ControlHandler.initialSegments(settings.initialSegmentsJson()),
                        settings.bounds().segmentLoader(),
                        LOG::warn);
        if (settings.initialSegmentsJson() != null) {
            held.clear();
            held.putAll(control.segments().descriptors());
        }
        LOG.info("Limit config version {} is in force", control.config().version());
        mirrorDebt = new MirrorDebt(context.getOperatorStateStore());
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        flush(); // before the keyed state backend takes its snapshot
        configState.update(List.of(control.config().json()));
        horizonState.update(List.of(sweptHorizon));
        waitingState.clear();
        List<String> pending = loads.pending();
        for (int i = 0; i < pending.size(); i++) {
            waitingState.put(i, pending.get(i));
        }
        mirrorDebt.snapshot();
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        auditsControl = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0;
        if (settings.mirror()) {
            mirrorDebt.attach(
                    MirrorLink.acquire(
                            getRuntimeContext().getJobInfo().getJobId().toString(),
                            getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                            getRuntimeContext().getTaskInfo().getAttemptNumber()));
        }
        metrics = new CappingMetrics(getRuntimeContext().getMetricGroup(), control);
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
        step = new DecisionStep(histories, settings.mirror());
        metrics.watch(histories);
    }

    @Override
    public void close() throws Exception {
        if (loads != null) {
            loads.close();
        }
        if (control != null) {
            control.close(); // gives back this task's share of the cached bitmaps
        }
        if (mirrorDebt != null) {
            mirrorDebt.release();
        }
        super.close();
    }

    /**
     * Called by {@link CappingOperator} before {@link #open}: how to switch the current key, which
     * the store needs to write histories it keeps in memory (at checkpoints, scans, evictions).
     */
    void useKeySetter(java.util.function.LongConsumer setCurrentKey) {
        this.keySetter = setCurrentKey;
    }

    @Override
    public void processElement(InboundMessage in, ReadOnlyContext ctx, Collector<Delivery> out)
            throws Exception {
        if (!loads.isEmpty()) {
            applyLoaded(ctx::output);
        }
        if (in.isMalformed()) {
            metrics.count(Decision.MALFORMED);
            ctx.output(AUDIT, AuditRecords.malformed(in, settings.bounds().maxRecordBytes()));
            return;
        }
        Decided d = step.decide(in.message(), control.config(), control.segments(), sweptHorizon);
        CappingRule.Verdict v = d.verdict();
        metrics.decided(v.decision(), v.segment(), in.message().timestamp());
        if (v.shadow() != null && v.shadow().decision() == Decision.REJECTED) {
            metrics.shadowRejected.inc();
        }
        if (!d.delivered()) {
            ctx.output(AUDIT, d.audit(in.value(), settings.bounds().maxRecordBytes()));
            return;
        }
        out.collect(d.delivery(in.key(), in.value()));
        if (settings.mirror() && d.decision() == Decision.ALLOWED) {
            ctx.output(MIRROR, d.mirrorWrite());
            mirrorDebt.noteDrops(); // the chained writer drops within output()
        }
    }

    @Override
    public void processBroadcastElement(ControlRecord rec, Context ctx, Collector<Delivery> out)
            throws Exception {
        if (settings.mirror()) {
            mirrorDebt.payIfDue(() -> rebuildMirror(ctx));
        }
        switch (rec.kind()) {
            case SWEEP:
                sweep(ctx);
                return;
            case MIRROR_TICK:
                return;
            default:
                break;
        }
        if (!loads.isEmpty()) {
            applyLoaded(ctx::output);
        }
        if (loads.mustWait(rec)) {
            loads.add(rec); // its file loads off this thread; the segments held decide meanwhile
            return;
        }
        apply(rec, ctx, ctx::output);
    }

    /** Where audit records go: the side output of whichever context the caller has. */
    private interface AuditOutput {
        void output(OutputTag<AuditEvent> tag, AuditEvent audit);
    }

    /** Applies the waiting segment records whose files are loaded, in order. */
    private void applyLoaded(AuditOutput audits) throws Exception {
        ControlRecord rec;
        while ((rec = loads.ready()) != null) {
            apply(rec, null, audits);
            loads.applied();
        }
    }

    /**
     * Applies one control record.
     *
     * @param ctx the broadcast context, for commands; null for segment records applied later
     */
    private void apply(ControlRecord rec, Context ctx, AuditOutput audits) throws Exception {
        Outcome outcome = control.apply(rec);
        if (outcome instanceof Outcome.SegmentApplied s) {
            segmentsState.put(s.segmentId(), s.descriptor());
            LOG.info("Segment {} version {} applied", s.segmentId(), s.version());
        } else if (outcome instanceof Outcome.ConfigApplied c) {
            LOG.info("Limit config version {} is in force", c.config().version());
        } else if (outcome instanceof Outcome.ForgetUser f) {
            forgetUser(f.userId(), rec, ctx, audits);
        } else if (outcome instanceof Outcome.Command) {
            if (settings.mirror()) {
                rebuildMirror(ctx);
            } else {
                LOG.info("rebuild-mirror received; this job runs without a Redis mirror");
            }
        } else if (outcome instanceof Outcome.NotApplied n) {
            if (n.cause() != null) {
                LOG.error(
                        "Control record {}-{}@{} not applied",
                        rec.topic(),
                        rec.partition(),
                        rec.offset(),
                        n.cause());
            }
            if (auditsControl) {
                auditNotApplied(rec, n.error(), audits);
            }
        }
    }

    private void auditNotApplied(ControlRecord rec, String error, AuditOutput audits) {
        metrics.count(Decision.INVALID_CONTROL);
        audits.output(
                AUDIT,
                AuditRecords.unreadable(
                        Decision.INVALID_CONTROL,
                        error,
                        rec.value(),
                        rec.topic(),
                        rec.partition(),
                        rec.offset(),
                        settings.bounds().maxRecordBytes()));
    }

    /**
     * Erases the user's history (short and long forms, cache, buckets) and, with the mirror on, its
     * Redis keys: done by the one instance whose key groups hold the user, which also audits a
     * failure (INVALID_CONTROL), since only it knows of one.
     */
    private void forgetUser(long user, ControlRecord rec, Context ctx, AuditOutput audits) {
        int maxParallelism = getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks();
        int parallelism = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
        int self = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        if (KeyGroupRangeAssignment.assignKeyToParallelOperator(user, maxParallelism, parallelism)
                != self) {
            return;
        }
        try {
            String[] channels = eraseHistory(user);
            if (settings.mirror()) {
                // A replacing write of nothing: the user's keys and its channels' keys deleted.
                ctx.output(
                        MIRROR,
                        new MirrorWrite(
                                user,
                                control.config().longestWindowMillis(),
                                true,
                                channels,
                                new int[0],
                                new long[0],
                                new String[0]));
                mirrorDebt.noteDrops();
            }
            LOG.info("forget-user: user {} erased ({} channels in Redis)", user, channels.length);
        } catch (Exception e) {
            LOG.error("forget-user of user {} failed", user, e);
            auditNotApplied(
                    rec,
                    "not applied: " + e.getClass().getSimpleName() + " while erasing user " + user,
                    audits);
        }
    }

    /** The user's history erased; the channels it held. Package-private: tests inject faults. */
    String[] eraseHistory(long user) throws Exception {
        keySetter.accept(user);
        return histories.forget(user);
    }

    /** Writes the histories only the cache holds to keyed state (before a snapshot or a scan). */
    private void flush() throws Exception {
        int maxParallelism = getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks();
        int n = histories.flush(u -> KeyGroupRangeAssignment.assignToKeyGroup(u, maxParallelism));
        LOG.debug("Wrote {} cached histories to keyed state", n);
    }

    /**
     * Clears every history of this instance whose latest counted message is at least twice the
     * longest window kept behind the watermark, and moves the swept horizon past what it cleared: a
     * later message that could share a window with a cleared entry is STALE, never decided on a
     * history that lacks it (docs/design.md, "State cleanup").
     */
    private void sweep(Context ctx) throws Exception {
        flush(); // the scan reads keyed state
        long watermark = ctx.currentWatermark();
        long kept = control.config().keptWindowMillis();
        if (watermark < Long.MIN_VALUE + 2 * kept) {
            return; // no event time yet
        }
        HistoryScans.Swept swept =
                HistoryScans.sweep(ctx, histories.states(), watermark - 2 * kept);
        histories.clearCache(); // it may hold what was just cleared
        if (swept.newestCleared() != Long.MIN_VALUE) {
            sweptHorizon =
                    Math.max(
                            sweptHorizon,
                            swept.newestCleared() + control.config().longestWindowMillis());
        }
        metrics.cleared.inc(swept.histories());
        LOG.debug(
                "Sweep at watermark {} cleared {} histories; messages before {} are STALE",
                watermark,
                swept.histories(),
                sweptHorizon);
    }

    /**
     * Writes every user's counted messages of the last longest window again, each user's keys
     * replaced at once, so Redis holds what this instance counted whatever it had lost.
     */
    private void rebuildMirror(Context ctx) throws Exception {
        flush(); // the scan reads keyed state
        HistoryScans.Rebuilt r =
                HistoryScans.rebuild(
                        ctx,
                        histories.states(),
                        control.config().longestWindowMillis(),
                        w -> ctx.output(MIRROR, w));
        LOG.info(
                "rebuild-mirror: {} users, {} counted messages written again ({} users counted"
                        + " while the mirror was off, without messageIds, left as they are)",
                r.users(),
                r.messages(),
                r.usersWithoutIds());
    }
}
