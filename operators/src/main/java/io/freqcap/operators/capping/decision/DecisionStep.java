package io.freqcap.operators.capping.decision;

import io.freqcap.operators.capping.history.HistoryGrowth;
import io.freqcap.operators.capping.rule.CappingRule;
import io.freqcap.operators.capping.rule.Judging;
import io.freqcap.operators.capping.rule.PreferenceRule;
import io.freqcap.operators.segments.SegmentTable;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldKey;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.preference.UserPreferences;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One message's way through capping, the same in the job and in a backtest ({@code
 * freqcap-simulate}): the user's history, the segment whose rule applies (and the shadow rules'),
 * the rule's verdict, the held messages a message of a {@code preempt} rule takes the place of, and
 * what to count and emit: all of it a value ({@link Decided}). It reads the stores and writes
 * nothing; {@link Stores#apply} writes what it decided, and the operator sends it. Plain Java.
 */
public final class DecisionStep {
    private static final Logger LOG = LoggerFactory.getLogger(DecisionStep.class);

    private final Stores stores;
    private final boolean keepMessageIds;
    private final long aheadMillis;

    /**
     * How far ahead of the clock messages are stamped, unless told ({@code --max-future}'s
     * default).
     */
    public static final long AHEAD_MILLIS = 86_400_000L;

    /**
     * @param stores the users' histories, held messages and preferences (read only here)
     * @param keepMessageIds keep ALLOWED messages' ids in the histories, and say what each changes
     *     in Redis (the mirror needs both)
     */
    public DecisionStep(Stores stores, boolean keepMessageIds) {
        this(stores, keepMessageIds, AHEAD_MILLIS);
    }

    /**
     * @param aheadMillis how far ahead of the clock a message may be stamped ({@code
     *     --max-future}): histories keep what lies between the clock and their latest stamped
     *     timestamp up to this far, and beyond it prune as if the clock were this far behind
     */
    public DecisionStep(Stores stores, boolean keepMessageIds, long aheadMillis) {
        this.stores = stores;
        this.keepMessageIds = keepMessageIds;
        this.aheadMillis = aheadMillis;
    }

    /**
     * Decides one input record; a malformed one reads no state.
     *
     * @param times what was swept ({@link Long#MIN_VALUE}: nothing), and the job's wall clock or a
     *     backtest's (the latest timestamp decided): which held messages are still waiting
     */
    public Decided decide(
            InboundMessage in, LimitConfig config, SegmentTable segments, Judging.Times times)
            throws Exception {
        if (in.isMalformed()) {
            return Decided.malformed(in, config);
        }
        long user = in.routingKey();
        String segment = segments.resolve(user, config);
        String shadowSegment = config.hasShadow() ? segments.resolveShadow(user, config) : segment;
        return decide(in, config, segment, shadowSegment, times);
    }

    /**
     * Decides one input record under segments already resolved (a test's oracle, which knows them).
     *
     * @param shadowSegment the segment whose shadow rule applies
     */
    public Decided decide(
            InboundMessage in,
            LimitConfig config,
            String segment,
            String shadowSegment,
            Judging.Times times)
            throws Exception {
        if (in.isMalformed()) {
            return Decided.malformed(in, config);
        }
        OutboundMessage m = in.message();
        CountedHistory before = stores.histories().get(m.userId());
        UserPreferences prefs = stores.preferences().of(m.userId());
        long engaged = config.fatigues() ? stores.engagements().lastOf(m.userId()) : Long.MIN_VALUE;
        long lifetime =
                readsLifetime(config, segment, shadowSegment, m)
                        ? stores.lifetimes().countAt(m.userId(), m.campaignId(), m.timestamp())
                        : 0;
        Judging j =
                new Judging(
                        config,
                        segment,
                        shadowSegment,
                        times,
                        new Judging.User(prefs, engaged, lifetime));
        try {
            return decide(in, m, before, j);
        } catch (RuleFailure e) {
            // The last guard of "no input stops the job" (contract.md §5): the rule threw on a
            // value at some edge (a bug), and nothing is written. Audited, not fatal: a restart
            // would meet the same message again, forever.
            LOG.error("Message {} could not be decided; audited as MALFORMED", in, e.getCause());
            return Decided.malformed(
                    in.undecided(UNDECIDED + e.getCause().getClass().getSimpleName()), config);
        }
    }

    /**
     * Whether the message's rule or shadow rule has a lifetime limit for it: only then is its
     * campaign's count read (a point read of keyed state).
     */
    private static boolean readsLifetime(
            LimitConfig config, String segment, String shadowSegment, OutboundMessage m) {
        return m.campaignId() != null
                && (!config.ruleFor(segment).caps().lifetime().isEmpty()
                        || (config.hasShadow()
                                && !config.shadowRuleFor(shadowSegment)
                                        .caps()
                                        .lifetime()
                                        .isEmpty()));
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

    private Decided decide(InboundMessage in, OutboundMessage m, CountedHistory found, Judging j)
            throws Exception {
        LimitConfig config = j.config();
        Verdict v = rule(() -> CappingRule.judge(found, m, j));
        CountedHistory before = found;
        List<HeldDelivery> preempted = List.of();
        if (v.decision() == Decision.REJECTED
                && config.ruleFor(j.segment()).preempt()
                && !PreferenceRule.neverPasses(j.prefs(), m)
                && rule(() -> CappingRule.rejectsAlone(found, m, j))) {
            Preemption.Found f =
                    preemption(
                            found,
                            m,
                            (h, taken) ->
                                    rule(
                                            () ->
                                                    CappingRule.judge(
                                                            h,
                                                            m,
                                                            j.freeing(sameCampaign(taken, m)))),
                            j.now());
            if (f != null) {
                // m is decided against the history without them, its shadow decision against
                // the history it found: shadow rules never preempt (contract.md §6).
                v = f.verdict().withShadow(v.shadow());
                preempted = f.taken();
                before = f.without();
            }
        }
        if (v.decision() != Decision.ALLOWED) {
            return new Decided(in, m, config, v, j.now(), preempted, null);
        }
        // Counting never prunes the entry stamped latest: this is the history's after it.
        long latestStamped =
                before.isEmpty() ? m.timestamp() : Math.max(before.latestStamped(), m.timestamp());
        // A held message is counted at its send time (contract.md §6).
        long countedAt = v.isHeld() ? v.sendAt() : m.timestamp();
        long kept = UserPreferences.keptMillis(config, j.prefs());
        Decided.Counting counting =
                new Decided.Counting(
                        preempted.isEmpty() ? found : null,
                        HistoryGrowth.entry(m, countedAt, keepMessageIds, config),
                        kept,
                        pruningClock(
                                j.now(), latestStamped, before.firstHeldWaiting(j.now()), kept));
        return new Decided(in, m, config, v, j.now(), preempted, counting);
    }

    /** How many of {@code taken} are of the message's campaign: their lifetime places free up. */
    private static long sameCampaign(List<HeldDelivery> taken, OutboundMessage m) {
        if (m.campaignId() == null) {
            return 0;
        }
        return taken.stream().filter(h -> m.campaignId().equals(h.message().campaignId())).count();
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
     * The held messages {@code m} takes the place of, and its verdict without them; null when there
     * are none it may take or it does not pass without them all. Reads held state only for a user
     * whose history has held entries still waiting, and only those: a point read each.
     */
    private Preemption.Found preemption(
            CountedHistory before,
            OutboundMessage m,
            BiFunction<CountedHistory, List<HeldDelivery>, Verdict> judge,
            long now)
            throws Exception {
        List<HeldKey> keys = new ArrayList<>();
        before.forEachHeldWaiting(
                Math.max(m.timestamp(), now), (at, fp) -> keys.add(new HeldKey(at, fp)));
        if (keys.isEmpty()) {
            return null;
        }
        List<HeldDelivery> lower = new ArrayList<>();
        for (HeldDelivery h : stores.held().waiting(m.userId(), keys)) {
            if (h.message().priority() < m.priority()) {
                lower.add(h);
            }
        }
        return lower.isEmpty() ? null : rule(() -> Preemption.find(before, lower, judge));
    }
}
