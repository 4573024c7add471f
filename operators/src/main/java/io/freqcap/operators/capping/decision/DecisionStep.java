package io.freqcap.operators.capping.decision;

import io.freqcap.operators.capping.history.HistoryGrowth;
import io.freqcap.operators.capping.rule.CappingRule;
import io.freqcap.operators.segments.SegmentTable;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldKey;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.mirror.MirrorWrite;
import io.freqcap.schema.preference.UserPreferences;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One message's way through capping, the same in the job and in a backtest ({@code
 * freqcap-simulate}): the user's history, the segment whose rule applies (and the shadow rules'),
 * the rule's verdict, the message counted when ALLOWED, and what to emit ({@link Decided}). The
 * operator only moves state in and out and sends what this gives; the backtest keeps its histories
 * in memory. Plain Java.
 */
public final class DecisionStep {
    private static final Logger LOG = LoggerFactory.getLogger(DecisionStep.class);

    private final Histories histories;
    private final HeldQueue held;
    private final Preferences preferences;
    private final boolean keepMessageIds;
    private final long aheadMillis;

    /**
     * How far ahead of the clock messages are stamped, unless told ({@code --max-future}'s
     * default).
     */
    public static final long AHEAD_MILLIS = 86_400_000L;

    /**
     * @param held the users' held messages, which a message of a {@code preempt} rule may take the
     *     place of
     * @param keepMessageIds keep ALLOWED messages' ids in the histories and the channels a user had
     *     before each (the Redis mirror needs both)
     */
    public DecisionStep(Histories histories, HeldQueue held, boolean keepMessageIds) {
        this(histories, held, Preferences.NONE, keepMessageIds);
    }

    /**
     * @param preferences the users' preferences, which every message must pass too
     */
    public DecisionStep(
            Histories histories, HeldQueue held, Preferences preferences, boolean keepMessageIds) {
        this(histories, held, preferences, keepMessageIds, AHEAD_MILLIS);
    }

    /**
     * @param aheadMillis how far ahead of the clock a message may be stamped ({@code
     *     --max-future}): histories keep what lies between the clock and their latest stamped
     *     timestamp up to this far, and beyond it prune as if the clock were this far behind
     */
    public DecisionStep(
            Histories histories,
            HeldQueue held,
            Preferences preferences,
            boolean keepMessageIds,
            long aheadMillis) {
        this.histories = histories;
        this.held = held;
        this.preferences = preferences;
        this.keepMessageIds = keepMessageIds;
        this.aheadMillis = aheadMillis;
    }

    /**
     * Decides one input record, counting it when ALLOWED; a malformed one touches no state.
     *
     * @param sweptHorizon see {@link CappingRule#judge(CountedHistory, OutboundMessage,
     *     LimitConfig, String, String, long, long)}; {@link Long#MIN_VALUE} where nothing was swept
     * @param now the job's wall clock, or a backtest's (the latest timestamp decided): which held
     *     messages are still waiting
     */
    public Decided decide(
            InboundMessage in,
            LimitConfig config,
            SegmentTable segments,
            long sweptHorizon,
            long now)
            throws Exception {
        if (in.isMalformed()) {
            return Decided.malformed(in, config);
        }
        long user = in.routingKey();
        String segment = segments.resolve(user, config);
        String shadowSegment = config.hasShadow() ? segments.resolveShadow(user, config) : segment;
        return decide(in, config, segment, shadowSegment, sweptHorizon, now);
    }

    /**
     * Decides one input record under segments already resolved (a test's oracle, which knows them),
     * counting it when ALLOWED.
     *
     * @param shadowSegment the segment whose shadow rule applies
     */
    public Decided decide(
            InboundMessage in,
            LimitConfig config,
            String segment,
            String shadowSegment,
            long sweptHorizon,
            long now)
            throws Exception {
        if (in.isMalformed()) {
            return Decided.malformed(in, config);
        }
        OutboundMessage m = in.message();
        CountedHistory before = histories.get(m.userId());
        UserPreferences prefs = preferences.of(m.userId());
        try {
            return decide(in, m, before, prefs, config, segment, shadowSegment, sweptHorizon, now);
        } catch (RuleFailure e) {
            // The last guard of "no input stops the job" (contract.md §5): the rule threw on a
            // value at some edge (a bug), before anything was written. Audited, not fatal: a
            // restart would meet the same message again, forever.
            LOG.error("Message {} could not be decided; audited as MALFORMED", in, e.getCause());
            return Decided.malformed(
                    in.undecided(UNDECIDED + e.getCause().getClass().getSimpleName()), config);
        }
    }

    /** The error of a message the rule threw on: then its exception's class. */
    public static final String UNDECIDED = "could not be decided: ";

    /** What the plain rule threw: only that becomes an audit record, never a state failure. */
    private static final class RuleFailure extends RuntimeException {
        RuleFailure(RuntimeException cause) {
            super(cause);
        }
    }

    /** A call into the plain rule: whatever it throws is a {@link RuleFailure}. */
    private static <T> T rule(java.util.function.Supplier<T> call) {
        try {
            return call.get();
        } catch (RuleFailure e) {
            throw e;
        } catch (RuntimeException e) {
            throw new RuleFailure(e);
        }
    }

    private Decided decide(
            InboundMessage in,
            OutboundMessage m,
            CountedHistory found,
            UserPreferences prefs,
            LimitConfig config,
            String segment,
            String shadowSegment,
            long sweptHorizon,
            long now)
            throws Exception {
        Verdict v =
                rule(
                        () ->
                                CappingRule.judge(
                                        found,
                                        m,
                                        config,
                                        segment,
                                        shadowSegment,
                                        sweptHorizon,
                                        now,
                                        prefs));
        CountedHistory before = found;
        List<HeldDelivery> preempted = List.of();
        if (v.decision() == Decision.REJECTED
                && config.ruleFor(segment).preempt()
                && !neverPasses(prefs, m)
                && rule(() -> CappingRule.rejectsAlone(found, m, config, segment))) {
            Preemption.Found f =
                    preemption(
                            before,
                            m,
                            h ->
                                    rule(
                                            () ->
                                                    CappingRule.judge(
                                                            h,
                                                            m,
                                                            config,
                                                            segment,
                                                            shadowSegment,
                                                            sweptHorizon,
                                                            now,
                                                            prefs)),
                            now);
            if (f != null) {
                // m is decided against the history without them, its shadow decision against
                // the history it found: shadow rules never preempt (contract.md §6).
                v = f.verdict().withShadow(v.shadow());
                preempted = f.taken();
                held.take(m.userId(), preempted);
                for (HeldDelivery h : preempted) {
                    histories.uncount(m.userId(), h.sendAt(), h.messageId());
                }
                before = histories.get(m.userId());
            }
        }
        MirrorWrite mirrorWrite = null;
        if (v.decision() == Decision.ALLOWED) {
            // Counting never prunes the entry stamped latest: this is the history's after it.
            long latestStamped =
                    before.isEmpty()
                            ? m.timestamp()
                            : Math.max(before.latestStamped(), m.timestamp());
            // A held message is counted at its send time (contract.md §6).
            long countedAt = v.isHeld() ? v.sendAt() : m.timestamp();
            if (keepMessageIds) {
                mirrorWrite =
                        MirrorChanges.counted(
                                before, m, countedAt, latestStamped, config.longestWindowMillis());
            }
            histories.count(
                    m.userId(),
                    before,
                    HistoryGrowth.entry(m, countedAt, keepMessageIds, config),
                    HistoryGrowth.keptMillis(config, prefs),
                    pruningClock(
                            now,
                            latestStamped,
                            before.firstHeldWaiting(now),
                            HistoryGrowth.keptMillis(config, prefs)));
        }
        return new Decided(in, m, config, v, mirrorWrite, now, preempted);
    }

    /**
     * The clock pruning reads ({@link HistoryGrowth#grown(CountedHistory,
     * io.freqcap.schema.history.HistoryEntry, long, long)}): the job's, but never more than {@link
     * #aheadMillis} behind the latest stamped timestamp, so a user stamping ahead of any bound
     * (microseconds under {@code --max-future off}) keeps a bounded history.
     */
    private long pruningClock(long now, long latestStamped, Long firstWaiting, long kept) {
        if (now == Long.MIN_VALUE || latestStamped < Long.MIN_VALUE + aheadMillis) {
            return now;
        }
        long clock = Math.max(now, latestStamped - aheadMillis);
        if (firstWaiting != null && firstWaiting < Long.MAX_VALUE - 2 * kept) {
            // A held message still waiting stays, however far ahead the latest is stamped: what
            // is dropped lies twice the kept window behind the clock, so the clock goes no later.
            clock = Math.min(clock, firstWaiting - 1 + 2 * kept);
        }
        return clock;
    }

    /**
     * Whether the user's preferences reject {@code m} whatever is counted (an opt-out, a pause for
     * good): then no held message is worth reading for it.
     */
    private static boolean neverPasses(UserPreferences prefs, OutboundMessage m) {
        return prefs != null
                && (prefs.optsOut(m.channel(), m.category()) || prefs.pausedAt(Long.MAX_VALUE));
    }

    /**
     * The held messages {@code m} takes the place of, and its verdict without them; null when there
     * are none it may take or it does not pass without them all. Reads held state only for a user
     * whose history has held entries still waiting, and only those: a point read each.
     */
    private Preemption.Found preemption(
            CountedHistory before,
            OutboundMessage m,
            Function<CountedHistory, Verdict> judge,
            long now)
            throws Exception {
        List<HeldKey> keys = new ArrayList<>();
        before.forEachHeldWaiting(
                Math.max(m.timestamp(), now), (at, fp) -> keys.add(new HeldKey(at, fp)));
        if (keys.isEmpty()) {
            return null;
        }
        List<HeldDelivery> lower = new ArrayList<>();
        for (HeldDelivery h : held.waiting(m.userId(), keys)) {
            if (h.priority() < m.priority()) {
                lower.add(h);
            }
        }
        return lower.isEmpty() ? null : rule(() -> Preemption.find(before, lower, judge));
    }
}
