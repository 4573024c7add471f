package io.freqcap.operators.capping;

import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.capping.decision.DecisionStep;
import io.freqcap.operators.capping.state.HeldCounts;
import io.freqcap.operators.capping.state.HeldMessages;
import io.freqcap.operators.capping.state.HistoryCache;
import io.freqcap.operators.capping.state.HistoryScans;
import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.operators.control.ControlHandler.Outcome;
import io.freqcap.operators.mirror.MirrorLink;
import io.freqcap.operators.mirror.RedisMirrorSink;
import io.freqcap.schema.config.ConfigRecord;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.AuditRecords;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.history.StoredHistory;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
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
 * <p><b>Held messages.</b> A message ALLOWED with a later send time (a rule's {@code hold}) waits
 * in keyed state ({@link HeldMessages}) for a processing-time timer of its own at that time (the
 * operator's, {@link CappingOperator}), or goes out at once when the time has passed. {@code
 * forget-user} turns it into a FORGOTTEN record, {@code cancel-held} into a CANCELLED one; either
 * way it stops counting (history, Redis). A user may have {@code maxHeld} waiting.
 *
 * <p>Why it is the longest operator class: it is the one place where keyed state meets Flink
 * (restore, snapshot, held messages and their timers, sweep, forget-user, the mirror's rebuild);
 * each of those is a few lines around a plain-Java call. The control side's operator state is
 * {@link ControlInput}'s.
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

    private final CappingSettings settings;

    private transient ControlInput control;
    private transient HistoryStore histories;
    private transient HeldMessages held;
    private transient HeldCounts heldCounts;
    private transient HeldMessages.Timers heldTimers;
    private transient DecisionStep step;
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
        control = new ControlInput(context.getOperatorStateStore(), settings, context.isRestored());
        mirrorDebt = new MirrorDebt(context.getOperatorStateStore());
        heldCounts = new HeldCounts(context.getOperatorStateStore());
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        flush(); // before the keyed state backend takes its snapshot
        control.snapshot();
        mirrorDebt.snapshot();
        heldCounts.snapshot();
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
        step = new DecisionStep(histories, settings.mirror());
        metrics.watch(histories);
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
                        heldTimers);
        metrics.watch(held);
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
    void useKeySetter(java.util.function.LongConsumer setCurrentKey) {
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
            auditIfNotApplied(a, audit -> ctx.output(AUDIT, audit));
        }
        if (in.isMalformed()) {
            metrics.count(Decision.MALFORMED);
            ctx.output(AUDIT, AuditRecords.malformed(in, settings.bounds().maxRecordBytes()));
            return;
        }
        Decided d =
                step.decide(
                        in.message(),
                        control.config(),
                        control.handler().segments(),
                        control.sweptHorizon(),
                        ctx.timerService().currentProcessingTime());
        Verdict v = d.verdict();
        metrics.decided(v.decision(), v.segment(), in.message().timestamp());
        if (v.shadow() != null && v.shadow().decision() == Decision.REJECTED) {
            metrics.shadowRejected.inc();
        }
        if (!d.delivered()) {
            ctx.output(AUDIT, d.audit(in.value(), settings.bounds().maxRecordBytes()));
            return;
        }
        Delivery delivery = d.delivery(in.key(), in.value());
        if (d.held()) {
            hold(delivery, in, ctx, out);
        } else {
            out.collect(delivery);
        }
        if (settings.mirror() && d.decision() == Decision.ALLOWED) {
            ctx.output(MIRROR, d.mirrorWrite());
            mirrorDebt.noteDrops(); // the chained writer drops within output()
        }
    }

    /**
     * A held message waits in keyed state for a timer at its send time; one whose send time has
     * passed already (a replay of old traffic) is delivered at once.
     */
    private void hold(
            Delivery delivery, InboundMessage in, ReadOnlyContext ctx, Collector<Delivery> out)
            throws Exception {
        metrics.held.inc();
        if (delivery.sendAt() <= ctx.timerService().currentProcessingTime()) {
            metrics.released.inc();
            out.collect(delivery);
            return;
        }
        held.hold(
                in.message().userId(),
                HeldDelivery.of(in.message().messageId(), in.message().timestamp(), delivery));
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
     * freqcap 0.3 held in lists, if the state has any (for the {@code heldNow} gauge).
     */
    void countHeld(KeyedStateBackend<Long> backend) throws Exception {
        held.countLegacy(backend, keySetter);
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
        for (ControlInput.Applied a : control.take(rec)) {
            if (a.outcome() instanceof Outcome.ForgetUser f) {
                forgetUser(f.userId(), a.record(), ctx);
            } else if (a.outcome() instanceof Outcome.CancelHeld c) {
                cancelHeld(c, a.record(), ctx);
            } else if (a.outcome() instanceof Outcome.Command) {
                if (settings.mirror()) {
                    rebuildMirror(ctx);
                } else {
                    LOG.info("rebuild-mirror received; this job runs without a Redis mirror");
                }
            } else {
                auditIfNotApplied(a, audit -> ctx.output(AUDIT, audit));
            }
        }
    }

    /** Audits a control record not applied: only instance 0 does, so each is audited once. */
    private void auditIfNotApplied(ControlInput.Applied a, Consumer<AuditEvent> audits) {
        if (a.outcome() instanceof Outcome.NotApplied n && auditsControl) {
            auditNotApplied(a.record(), n.error(), audits);
        }
    }

    private void auditNotApplied(ControlRecord rec, String error, Consumer<AuditEvent> audits) {
        metrics.count(Decision.INVALID_CONTROL);
        audits.accept(
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
     * failure (INVALID_CONTROL), since only it knows of one. The erasure of the Redis keys is
     * remembered until Redis confirms it ({@link MirrorDebt}).
     */
    private void forgetUser(long user, ControlRecord rec, Context ctx) {
        if (!owns(user)) {
            return;
        }
        try {
            String[] channels = eraseHistory(user);
            forgetHeld(user, ctx);
            if (settings.mirror()) {
                mirrorDebt.erasing(user, channels);
                ctx.output(MIRROR, erasure(user, channels));
                mirrorDebt.noteDrops();
            }
            LOG.info("forget-user: user {} erased ({} channels in Redis)", user, channels.length);
        } catch (Exception e) {
            LOG.error("forget-user of user {} failed", user, e);
            auditNotApplied(
                    rec,
                    "not applied: " + e.getClass().getSimpleName() + " while erasing user " + user,
                    audit -> ctx.output(AUDIT, audit));
        }
    }

    /**
     * Each held message of the user becomes a FORGOTTEN audit record instead of its delivery
     * (contract.md §7).
     */
    private void forgetHeld(long user, Context ctx) throws Exception {
        keySetter.accept(user);
        for (HeldDelivery h : held.withdraw(user, h -> true)) {
            metrics.count(Decision.FORGOTTEN);
            ctx.output(AUDIT, Decided.forgotten(h, settings.bounds().maxRecordBytes()));
        }
    }

    /** A replacing write of nothing: the user's keys and its channels' keys deleted. */
    private MirrorWrite erasure(long user, String[] channels) {
        return new MirrorWrite(
                user,
                control.config().longestWindowMillis(),
                MirrorWrite.Kind.REPLACE,
                MirrorWrite.NO_TRIM,
                channels,
                new int[0],
                new long[0],
                new String[0]);
    }

    /**
     * Withdraws the held messages of a campaign (contract.md §7): of one user, by the instance that
     * holds it, or of every user of every instance. Each gets a CANCELLED record instead of its
     * delivery and stops counting (history, Redis). Applied twice, the second finds nothing.
     */
    private void cancelHeld(Outcome.CancelHeld c, ControlRecord rec, Context ctx) {
        List<Long> users = new ArrayList<>();
        try {
            if (c.userId() != null) {
                if (owns(c.userId())) {
                    users.add(c.userId());
                }
            } else {
                java.util.Set<Long> all = new java.util.LinkedHashSet<>();
                ctx.applyToKeyedState(HeldMessages.STATE, (user, state) -> all.add(user));
                ctx.applyToKeyedState(HeldMessages.LEGACY, (user, state) -> all.add(user));
                users.addAll(all);
            }
            long n = 0;
            for (long user : users) {
                n += cancelHeld(user, c.campaignId(), ctx);
            }
            LOG.info(
                    "cancel-held of campaign {}{}: {} held messages cancelled",
                    c.campaignId(),
                    c.userId() == null ? "" : " for user " + c.userId(),
                    n);
        } catch (Exception e) {
            LOG.error("cancel-held of campaign {} failed", c.campaignId(), e);
            if (c.userId() != null ? owns(c.userId()) : auditsControl) {
                auditNotApplied(
                        rec,
                        "not applied: "
                                + e.getClass().getSimpleName()
                                + " while cancelling held messages",
                        audit -> ctx.output(AUDIT, audit));
            }
        }
    }

    private int cancelHeld(long user, String campaignId, Context ctx) throws Exception {
        keySetter.accept(user);
        List<HeldDelivery> cancelled =
                held.withdraw(user, h -> campaignId.equals(Decided.heldMessage(h).campaignId()));
        if (cancelled.isEmpty()) {
            return 0;
        }
        String[] ids = new String[cancelled.size()];
        String[] channels = new String[cancelled.size()];
        for (int i = 0; i < ids.length; i++) {
            HeldDelivery h = cancelled.get(i);
            histories.uncount(user, h.sendAt(), h.messageId());
            metrics.count(Decision.CANCELLED);
            ctx.output(
                    AUDIT,
                    Decided.cancelled(
                            h,
                            ConfigRecord.Command.CANCEL_HELD,
                            settings.bounds().maxRecordBytes()));
            ids[i] = h.messageId();
            channels[i] = Decided.heldMessage(h).channel();
        }
        if (settings.mirror()) {
            ctx.output(
                    MIRROR,
                    MirrorWrite.removal(
                            user, control.config().longestWindowMillis(), ids, channels));
            mirrorDebt.noteDrops();
        }
        return cancelled.size();
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
            control.sweptTo(swept.newestCleared() + control.config().longestWindowMillis());
        }
        metrics.cleared.inc(swept.histories());
        LOG.debug(
                "Sweep at watermark {} cleared {} histories; messages before {} are STALE",
                watermark,
                swept.histories(),
                control.sweptHorizon());
    }

    /**
     * Writes every user's counted messages of the last longest window again, each user's keys
     * replaced at once, so Redis holds what this instance counted whatever it had lost.
     */
    private void rebuildMirror(Context ctx) throws Exception {
        // Erasures Redis has not confirmed first: the backlog that held them may have been
        // dropped, and the scan below writes only users still in state.
        for (var e : mirrorDebt.erasures().entrySet()) {
            ctx.output(MIRROR, erasure(e.getKey(), e.getValue()));
        }
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
