package io.freqcap.operators.capping;

import io.freqcap.operators.capping.controlstate.ControlInput;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.capping.decision.DecisionStep;
import io.freqcap.operators.capping.decision.Stores;
import io.freqcap.operators.capping.fatigue.EngagementStore;
import io.freqcap.operators.capping.held.HeldBooks;
import io.freqcap.operators.capping.held.HeldMessages;
import io.freqcap.operators.capping.held.HeldSide;
import io.freqcap.operators.capping.held.HeldTopicStart;
import io.freqcap.operators.capping.held.Withdrawals;
import io.freqcap.operators.capping.lifetime.LifetimeStore;
import io.freqcap.operators.capping.outputs.CappingMetrics;
import io.freqcap.operators.capping.outputs.CappingOutputs;
import io.freqcap.operators.capping.outputs.HeldNotices;
import io.freqcap.operators.capping.outputs.MirrorDebt;
import io.freqcap.operators.capping.outputs.MirrorLogs;
import io.freqcap.operators.capping.preference.PreferenceInputs;
import io.freqcap.operators.capping.preference.PreferenceStore;
import io.freqcap.operators.capping.receipt.ReceiptInputs;
import io.freqcap.operators.capping.rule.Judging;
import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.preference.UserPreferences;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.LongPredicate;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.ValueState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a {@link CappingFunction} wires once it opens, and drops when it closes: the stores over
 * keyed state, the decision, the outputs and metrics, and what applies user inputs and control
 * records. One place that says which part is handed which.
 */
final class CappingParts {
    private static final Logger LOG = LoggerFactory.getLogger(CappingParts.class);

    final CappingMetrics metrics;
    final HistoryStore histories;
    final HeldMessages held;
    final PreferenceStore preferences;
    final EngagementStore engagements;
    final LifetimeStore lifetimes;
    final Stores stores;
    final DecisionStep step;
    final MirrorLogs mirrorLogs;
    final CappingOutputs outputs;
    final PreferenceInputs preferenceInputs;
    final ReceiptInputs receiptInputs;
    final Upkeep upkeep;
    final HeldSide heldSide;

    /** What the function kept in operator state, restored before it opens. */
    record Restored(
            ControlInput control,
            MirrorDebt mirrorDebt,
            HeldBooks heldBooks,
            HeldTopicStart heldTopicStart) {}

    /**
     * What the function's operator and the function itself hand in.
     *
     * @param keySetter switches the current key ({@link CappingOperator})
     * @param timers held messages' timers ({@link CappingOperator})
     * @param owns whether a user's key group is this task's
     * @param preferenceStore the users' preferences over their keyed state (tests inject faults)
     * @param eraser erases a user (tests inject faults)
     */
    record Hooks(
            LongConsumer keySetter,
            HeldMessages.Timers timers,
            LongPredicate owns,
            Function<ValueState<UserPreferences>, PreferenceStore> preferenceStore,
            Withdrawals.Eraser eraser) {}

    CappingParts(CappingSettings settings, RuntimeContext rc, Restored restored, Hooks hooks)
            throws Exception {
        ControlInput control = restored.control();
        MirrorDebt mirrorDebt = restored.mirrorDebt();
        if (settings.mirror()) {
            mirrorDebt.windowChanged(control.config().longestWindowMillis());
        }
        metrics = new CappingMetrics(rc.getMetricGroup(), control.handler());
        int cacheSlots = HistoryStore.cacheSlots(settings.historyCacheSlots());
        mirrorLogs = settings.mirror() ? new MirrorLogs() : null;
        histories =
                new HistoryStore(
                        HistoryStore.States.of(rc),
                        hooks.keySetter(),
                        cacheSlots,
                        metrics.cacheHits::inc,
                        settings.liveHistoryBytes());
        metrics.gauge("longHistories", histories.live()::size);
        metrics.gauge("longHistoryEntries", histories.live()::entries);
        metrics.gauge("longHistoryBytes", histories.live()::bytes);
        try {
            held = restored.heldBooks().open(rc, hooks.timers());
            metrics.gauge("heldNow", held::heldNow);
            metrics.heldDue(held.hours()::due, held.hours()::dueFrom);
            preferences = hooks.preferenceStore().apply(rc.getState(PreferenceStore.STATE));
            metrics.gauge("usersWithPreferences", preferences::users);
            engagements = new EngagementStore(rc.getState(EngagementStore.STATE));
            lifetimes =
                    new LifetimeStore(
                            rc.getMapState(LifetimeStore.STATE),
                            settings.bounds().lifetimeRetentionMillis(),
                            control::lifetimeCounting,
                            hooks.keySetter(),
                            cacheSlots);
            metrics.gauge("usersWithLifetimeCounts", lifetimes::users);
            stores = new Stores(histories, held, preferences, engagements, lifetimes);
            long ahead = settings.bounds().maxFuture().millis();
            step =
                    new DecisionStep(
                            stores,
                            settings.mirror(),
                            // off: as far as the default bound, so every history stays bounded
                            ahead == Long.MAX_VALUE ? DecisionStep.AHEAD_MILLIS : ahead);
            outputs = outputs(settings, control, mirrorDebt);
            Withdrawals withdrawals =
                    new Withdrawals(
                            histories,
                            held,
                            lifetimes,
                            hooks.keySetter(),
                            hooks.owns(),
                            hooks.eraser(),
                            outputs);
            preferenceInputs = new PreferenceInputs(histories, preferences, withdrawals, metrics);
            receiptInputs = new ReceiptInputs(stores, held, metrics, settings.bounds().maxFuture());
            heldSide =
                    new HeldSide(
                            held, restored.heldTopicStart(), outputs, metrics, hooks.keySetter());
            upkeep =
                    new Upkeep(
                            control,
                            withdrawals,
                            metrics,
                            settings.mirror() ? mirrorDebt : null,
                            rc.getTaskInfo().getIndexOfThisSubtask() == 0,
                            () -> rc.getTaskInfo().getMaxNumberOfParallelSubtasks(),
                            preferences::has,
                            engagements);
        } catch (Exception e) {
            histories.close(); // its share of the history cache, which a failed open would keep
            throw e;
        }
    }

    private CappingOutputs outputs(
            CappingSettings settings, ControlInput control, MirrorDebt mirrorDebt) {
        HeldNotices notices =
                settings.heldTopic() == null
                        ? null
                        : new HeldNotices(
                                metrics.heldNotices,
                                settings.bounds().maxRecordBytes(),
                                () -> control.config().timezone(),
                                settings.heldTopic().transactional());
        return new CappingOutputs(
                metrics,
                mirrorDebt,
                mirrorLogs,
                settings.bounds().maxRecordBytes(),
                () -> control.config().longestWindowMillis(),
                notices);
    }

    /**
     * Decides a message ({@link DecisionStep}), writes what was decided into state ({@link
     * Stores#apply}) and sends its records.
     */
    void decide(InboundMessage in, ControlInput control, long now, CappingOutputs.Sink sink)
            throws Exception {
        Decided d =
                step.decide(
                        in,
                        control.config(),
                        control.handler().segments(),
                        new Judging.Times(control.sweptHorizon(), now));
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
}
