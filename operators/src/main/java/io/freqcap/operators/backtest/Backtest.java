package io.freqcap.operators.backtest;

import io.freqcap.operators.capping.Bounds;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.capping.decision.DecisionStep;
import io.freqcap.operators.capping.decision.Preferences;
import io.freqcap.operators.capping.decision.Stores;
import io.freqcap.operators.capping.receipt.Receipts;
import io.freqcap.operators.capping.rule.Judging;
import io.freqcap.operators.control.ControlHandler;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.preference.UserPreferences;
import io.freqcap.schema.receipt.DeliveryReceipt;
import io.freqcap.schema.segment.SegmentUpdate;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Decides messages as the capping operator does, offline: one config and one set of segments, every
 * user's history in memory, no Flink. Each user's messages are decided in the order given, as the
 * job decides them in partition order, with the job's own {@link DecisionStep} (the same segment
 * resolution, rule and counting).
 *
 * <p>What it does not do: the job's periodic sweep, which clears a history once event time is twice
 * the longest window past its latest entry, and the swept horizon that comes with it. That can only
 * change a message that repeats a counted messageId more than twice the longest window later
 * (DUPLICATE here, ALLOWED in a job that swept in between), or one that arrives more than about the
 * longest window behind what the job had already swept (decided here, STALE in the job); when the
 * job sweeps depends on its event time and wall clock, not on the input alone.
 */
public final class Backtest implements AutoCloseable {
    private final ControlHandler control;
    private final MemoryHistories histories = new MemoryHistories();
    private final MemoryHeld held = new MemoryHeld();
    private final MemoryEngagements engagements = new MemoryEngagements();
    private final Stores stores;
    private final DecisionStep step;

    /**
     * The replay's wall clock: the latest timestamp decided, this message's included (contract.md
     * §8), which tells which held messages are still waiting.
     */
    private long clock = Long.MIN_VALUE;

    private Backtest(
            ControlHandler control,
            Map<Long, UserPreferences> preferences,
            long lifetimeRetentionMillis) {
        this.control = control;
        this.stores =
                new Stores(
                        histories,
                        held,
                        preferences.isEmpty() ? Preferences.NONE : preferences::get,
                        engagements,
                        // from the first record when the config has a lifetime limit (§8)
                        new MemoryLifetimes(
                                lifetimeRetentionMillis, control.config().hasLifetime()));
        this.step = new DecisionStep(stores, false);
    }

    /**
     * Applies a delivery receipt as the job does (contract.md §11): a {@code failed} one un-counts
     * a counted message that is no longer held, an engagement may become the user's last; what it
     * did is the effect returned. A held message is no longer held once its send time is at or
     * before the later of the replay's clock and the receipt's timestamp: a live job reads a
     * receipt stamped T at about T, after it has sent what was due by then.
     *
     * @param time the receipt's timestamp (simulate refuses a receipt without one) and the latest
     *     an engagement may be stamped
     */
    public Receipts.Effect receipt(DeliveryReceipt r, Receipts.Time time) {
        try {
            long now = Math.max(clock, time.at());
            Receipts.Effect effect =
                    Receipts.of(
                            r,
                            r.userId(),
                            time,
                            histories,
                            engagements,
                            (u, e) -> e.timestamp() > now);
            effect.apply(stores);
            return effect;
        } catch (Exception e) {
            throw new IllegalStateException("in-memory histories cannot fail", e);
        }
    }

    /**
     * A backtest under the job's default bounds and no preferences.
     *
     * @param segments full loads, as for the job's {@code --segments}
     * @param log where a segment that could not be applied is told
     */
    public static Backtest start(
            LimitConfig config, List<SegmentUpdate> segments, Consumer<String> log)
            throws IOException, MalformedRecordException {
        return start(config, segments, Bounds.DEFAULTS, log, Map.of());
    }

    /**
     * A backtest as the job decides under {@code bounds}: its segment loader and its lifetime
     * retention ({@code --lifetime-retention}).
     *
     * @param preferences users' preferences, in force for the whole replay
     */
    public static Backtest start(
            LimitConfig config,
            List<SegmentUpdate> segments,
            Bounds bounds,
            Consumer<String> log,
            Map<Long, UserPreferences> preferences)
            throws IOException, MalformedRecordException {
        return new Backtest(
                ControlHandler.start(
                        config, List.of(), Map.of(), segments, bounds.segmentLoader(), log),
                Map.copyOf(preferences),
                bounds.lifetimeRetentionMillis());
    }

    public LimitConfig config() {
        return control.config();
    }

    /**
     * Decides one input record, counting it when ALLOWED; a message of a {@code preempt} rule may
     * take the place of held messages still waiting ({@link Decided#preempted}), whose outcome then
     * changes from the ALLOWED one given before to PREEMPTED. A held message's outcome is final
     * once the clock reaches its send time ({@link #clock}).
     */
    public Decided decide(InboundMessage in) {
        if (!in.isMalformed()) {
            clock = Math.max(clock, in.timestamp());
        }
        try {
            Decided d =
                    step.decide(
                            in,
                            control.config(),
                            control.segments(),
                            new Judging.Times(Long.MIN_VALUE, clock));
            // One held is still waiting: a later message may take its place (contract.md §6).
            stores.apply(d);
            return d;
        } catch (Exception e) {
            throw new IllegalStateException("in-memory histories cannot fail", e);
        }
    }

    /** The replay's clock: the latest timestamp decided so far. */
    public long clock() {
        return clock;
    }

    /** Users with a counted message. */
    public int users() {
        return histories.users();
    }

    @Override
    public void close() {
        control.close();
    }
}
