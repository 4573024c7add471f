package io.freqcap.operators.capping;

import io.freqcap.operators.capping.controlstate.ControlInput;
import io.freqcap.operators.capping.fatigue.EngagementStore;
import io.freqcap.operators.capping.held.HeldMessages;
import io.freqcap.operators.capping.held.Withdrawals;
import io.freqcap.operators.capping.lifetime.LifetimeStore;
import io.freqcap.operators.capping.outputs.CappingMetrics;
import io.freqcap.operators.capping.outputs.CappingOutputs;
import io.freqcap.operators.capping.outputs.MirrorDebt;
import io.freqcap.operators.capping.state.HistoryScans;
import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.operators.control.ControlHandler.Outcome;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.config.Limit;
import java.util.function.IntSupplier;
import java.util.function.LongConsumer;
import java.util.function.LongPredicate;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link CappingFunction} does on the control side, to many users' state at once: the control
 * records' commands (forget-user, cancel-held, rebuild-mirror) and audits, writing the histories
 * only the cache holds to keyed state, the periodic sweep, and the Redis mirror's rebuild.
 *
 * <p>Control records (the broadcast input) are parsed by every parallel instance and applied by
 * version (a config replaces the one in force only if its version is higher), so instances agree
 * whatever order they see them in. Only instance 0 writes the INVALID_CONTROL audit record of a
 * control record that is not applied, so each is audited once.
 *
 * @param mirrorDebt the mirror's bookkeeping; null with the mirror off
 * @param auditsControl whether this is instance 0
 */
record Upkeep(
        ControlInput control,
        Withdrawals withdrawals,
        CappingMetrics metrics,
        MirrorDebt mirrorDebt,
        boolean auditsControl,
        IntSupplier maxParallelism,
        LongPredicate hasPreferences,
        EngagementStore engagements) {
    private static final Logger LOG = LoggerFactory.getLogger(Upkeep.class);

    /** The histories, as the withdrawals write them. */
    private HistoryStore histories() {
        return withdrawals.histories();
    }

    /** Applies a control record, a sweep or the mirror's tick. */
    void control(
            ControlRecord rec,
            KeyedBroadcastProcessFunction<Long, ?, ?, ?>.Context ctx,
            CappingOutputs.Sink sink)
            throws Exception {
        if (mirrorDebt != null) {
            mirrorDebt.payIfDue(() -> rebuildMirror(ctx, sink));
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
                withdrawals.forgetUser(f.userId(), a.record(), sink);
            } else if (a.outcome() instanceof Outcome.CancelHeld c) {
                withdrawals.cancelHeld(
                        c, a.record(), users -> heldUsers(ctx, users), auditsControl, sink);
            } else if (a.outcome() instanceof Outcome.EndCampaign e) {
                endCampaign(e.campaignId(), a.record(), ctx, sink);
            } else if (a.outcome() instanceof Outcome.Command) {
                if (mirrorDebt != null) {
                    mirrorDebt.rebuild(() -> rebuildMirror(ctx, sink));
                } else {
                    LOG.info("rebuild-mirror received; this job runs without a Redis mirror");
                }
            } else {
                auditIfNotApplied(a, sink);
            }
        }
        if (mirrorDebt != null
                && mirrorDebt.windowChanged(control.config().longestWindowMillis())) {
            LOG.info("The longest window changed: every user's Redis key is written again");
            mirrorDebt.rebuild(() -> rebuildMirror(ctx, sink));
        }
    }

    /**
     * Drops every user's lifetime count of the campaign (contract.md §7 {@code end-campaign}): each
     * instance its own users'; one that fails audits it, as only it knows.
     */
    private void endCampaign(
            String campaign,
            ControlRecord rec,
            KeyedBroadcastProcessFunction<Long, ?, ?, ?>.Context ctx,
            CappingOutputs.Sink sink) {
        try {
            flush(); // the pass reads keyed state
            long users =
                    withdrawals
                            .lifetimes()
                            .endCampaign(
                                    f -> ctx.applyToKeyedState(LifetimeStore.STATE, f), campaign);
            LOG.info("end-campaign {}: the lifetime counts of {} users dropped", campaign, users);
        } catch (Exception e) {
            LOG.error("end-campaign {} failed", campaign, e);
            sink.notApplied(
                    rec,
                    "not applied: "
                            + e.getClass().getSimpleName()
                            + " while ending campaign "
                            + campaign);
        }
    }

    /** Applies the control records whose segment files have loaded meanwhile. */
    void applyLoaded(CappingOutputs.Sink sink) throws Exception {
        for (ControlInput.Applied a : control.applyLoaded()) {
            auditIfNotApplied(a, sink);
        }
    }

    /** Audits a control record not applied: only instance 0 does, so each is audited once. */
    private void auditIfNotApplied(ControlInput.Applied a, CappingOutputs.Sink sink) {
        if (a.outcome() instanceof Outcome.NotApplied n && auditsControl) {
            sink.notApplied(a.record(), n.error());
        }
    }

    /** Every user of this instance with held messages (0.3's lists included). */
    private static void heldUsers(
            KeyedBroadcastProcessFunction<Long, ?, ?, ?>.Context ctx, LongConsumer users)
            throws Exception {
        ctx.applyToKeyedState(HeldMessages.STATE, (user, state) -> users.accept(user));
        ctx.applyToKeyedState(HeldMessages.LEGACY, (user, state) -> users.accept(user));
    }

    /**
     * Writes the histories and lifetime counts only the caches hold to keyed state (before a
     * snapshot or a scan).
     */
    void flush() throws Exception {
        int max = maxParallelism.getAsInt();
        int n = histories().flush(u -> KeyGroupRangeAssignment.assignToKeyGroup(u, max));
        int counts =
                withdrawals
                        .lifetimes()
                        .flush(u -> KeyGroupRangeAssignment.assignToKeyGroup(u, max));
        LOG.debug(
                "Wrote {} cached histories and {} users' lifetime counts to keyed state",
                n,
                counts);
    }

    /**
     * Clears every history of this instance whose latest counted message is at least twice the
     * longest window kept behind the watermark, and moves the swept horizon past what it cleared: a
     * later message that could share a window with a cleared entry is STALE, never decided on a
     * history that lacks it (docs/design.md, "State cleanup"). A user with preferences may have
     * limits of its own up to the longest window a limit may have ({@link
     * Limit#MAX_WINDOW_MILLIS}): that user's history is cleared only twice that behind.
     */
    void sweep(KeyedBroadcastProcessFunction<Long, ?, ?, ?>.Context ctx) throws Exception {
        flush(); // the scan reads keyed state
        long watermark = ctx.currentWatermark();
        long kept = control.config().keptWindowMillis();
        if (watermark < Long.MIN_VALUE + 2 * kept) {
            return; // no event time yet
        }
        // How far a cleared history's entries reach: the rules' windows, and their fatigue's (a
        // message up to its window after the latest cleared entry would count that entry in u).
        // Never a shadow rule's (contract.md §6): its decision for such a message may see less.
        long longest =
                Math.max(
                        control.config().longestWindowMillis(),
                        control.config().rulesFatigueWindowMillis());
        long plain = watermark - 2 * kept;
        long ownKept = Math.max(kept, Limit.MAX_WINDOW_MILLIS);
        long own =
                watermark < Long.MIN_VALUE + 2 * ownKept ? Long.MIN_VALUE : watermark - 2 * ownKept;
        HistoryScans.Swept swept =
                HistoryScans.sweep(
                        ctx,
                        histories().states(),
                        new HistoryScans.Reach() {
                            @Override
                            public long clearBefore(long user) {
                                return hasPreferences.test(user) ? own : plain;
                            }

                            @Override
                            public long window(long user) {
                                return hasPreferences.test(user)
                                        ? Math.max(longest, Limit.MAX_WINDOW_MILLIS)
                                        : longest;
                            }
                        });
        histories().clearCache(); // it may hold what was just cleared
        // A last engagement goes with its history (contract.md §11).
        long dropped =
                engagements.sweep(
                        f -> ctx.applyToKeyedState(EngagementStore.STATE, f),
                        (user, at) ->
                                at <= (hasPreferences.test(user) ? own : plain)
                                        && histories().noneInState());
        if (swept.horizon() != Long.MIN_VALUE) {
            control.sweptTo(swept.horizon());
        }
        long sweptHorizon = control.sweptHorizon();
        long countsDropped =
                sweptHorizon == Long.MIN_VALUE
                        ? 0
                        // Every message stamped before the horizon is STALE: what the ones after it
                        // read as 0 can go.
                        : withdrawals
                                .lifetimes()
                                .sweep(
                                        f -> ctx.applyToKeyedState(LifetimeStore.STATE, f),
                                        sweptHorizon);
        metrics.cleared.inc(swept.histories());
        LOG.debug(
                "Sweep at watermark {} cleared {} histories ({} last engagements, {} lifetime"
                        + " counts); messages before {} are STALE",
                watermark,
                swept.histories(),
                dropped,
                countsDropped,
                control.sweptHorizon());
    }

    /**
     * Writes every user's counted messages of the last longest window again, each user's keys
     * replaced at once, so Redis holds what this instance counted whatever it had lost.
     */
    void rebuildMirror(
            KeyedBroadcastProcessFunction<Long, ?, ?, ?>.Context ctx, CappingOutputs.Sink sink)
            throws Exception {
        // Erasures Redis has not confirmed first: the backlog that held them may have been
        // dropped, and the scan below writes only users still in state.
        sink.eraseAgain();
        flush(); // the scan reads keyed state
        HistoryScans.Rebuilt r =
                HistoryScans.rebuild(
                        ctx,
                        histories().states(),
                        control.config().longestWindowMillis(),
                        sink::rebuild);
        LOG.info(
                "rebuild-mirror: {} users, {} counted messages written again ({} users counted"
                        + " while the mirror was off, without messageIds, left as they are)",
                r.users(),
                r.messages(),
                r.usersWithoutIds());
    }
}
