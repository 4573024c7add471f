package io.freqcap.operators.capping.rule;

import io.freqcap.operators.capping.rule.Periods.ZoneClock;
import io.freqcap.schema.common.Zones;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.config.QuietHours;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.ShadowDecision;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.Fingerprints;
import io.freqcap.schema.history.HistoryEntry;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.preference.UserPreferences;
import java.util.ArrayList;
import java.util.List;

/**
 * The decision rule of contract.md §5 and §6, for one message of one user. Plain Java: no Flink
 * types.
 *
 * <p>For a limit (window w, max L) and the counted timestamps A in its scope, a message at t is
 * allowed only if every half-open interval [s, s + w) containing t holds at most L entries of A ∪
 * {t}. The intervals containing t start in (t − w, t]; the fullest of them starts at t itself or at
 * an entry of A in that range (sliding a start right past empty space never loses an entry), so
 * checking those starts is exact and costs O(|A|) with two pointers.
 *
 * <p>The history kept is bounded: a message older than latest − W (W the longest window in force)
 * is STALE, so no interval that matters starts before latest − 2W, and entries at or before that
 * are dropped whenever the history is written.
 *
 * <p>This class takes a message through the rule's steps in the contract's order (EXEMPT,
 * DUPLICATE, STALE, the segment's rule, holds, the shadow rule); {@link LimitCheck} checks the
 * limits of one rule at one time.
 */
public final class CappingRule {
    private CappingRule() {}

    /**
     * Decides one message without counting it: the caller adds an ALLOWED message to the history;
     * and, when the config has shadow rules, what they would decide (for a message that reaches the
     * limits: not EXEMPT, DUPLICATE or STALE). A message at or after the latest counted one (the
     * common case) costs a few lookups per limit, however long the history; an earlier one reads
     * the entries its limits' windows can reach.
     *
     * <p>A user's preferences (contract.md §10) are checked with the rule, against the same history
     * ({@link PreferenceRule}); EXEMPT messages ignore them, and they never make a message STALE.
     * Shadow rules read them too: they are the user's, whatever the rules.
     */
    public static Verdict judge(CountedHistory history, OutboundMessage m, Judging j) {
        LimitConfig config = j.config();
        String segment = j.segment();
        UserPreferences prefs = j.prefs();
        if (config.isExempt(m.category())) {
            return Verdict.passed(Decision.EXEMPT, segment);
        }
        if (remembered(history, Fingerprints.of(m.messageId()), config, prefs)) {
            return Verdict.explained(
                    Decision.DUPLICATE,
                    segment,
                    "messageId " + m.messageId() + " is already counted for this user");
        }
        long t = m.timestamp();
        long longest = config.longestWindowMillis();
        // The cheap test first: the latest stamped timestamp is at most the latest counted one.
        if (!history.isEmpty()
                && t < history.latest() - longest
                && t < history.latestStamped() - longest) {
            return Verdict.explained(
                    Decision.STALE,
                    segment,
                    "timestamp "
                            + t
                            + " is older than the latest counted timestamp "
                            + history.latestStamped()
                            + " minus the longest window ("
                            + longest
                            + " ms)");
        }
        long sweptHorizon = j.sweptHorizon();
        if (t < sweptHorizon) {
            return Verdict.explained(
                    Decision.STALE,
                    segment,
                    "timestamp "
                            + t
                            + " is older than "
                            + sweptHorizon
                            + ", before which this job has cleared histories that are no longer"
                            + " kept (twice the longest window behind its event time)");
        }
        Subject subject = subject(history, m, j.config(), j.user());
        Rule rule = config.ruleFor(segment);
        long now = j.now();
        Verdict v =
                decide(
                        subject,
                        Under.rule(
                                segment, rule, true, new Under.HeldBound(now, config.maxHeld())));
        if (!config.hasShadow()) {
            return v;
        }
        String shadowSegment = j.shadowSegment();
        Rule shadowRule = config.shadowRuleFor(shadowSegment);
        // Shadow rules hold without a bound: maxHeld protects the job's state, which they never
        // fill.
        Verdict s =
                decide(
                        subject,
                        Under.rule(shadowSegment, shadowRule, false, Under.HeldBound.none(now)));
        return v.withShadow(
                new ShadowDecision(
                        s.decision(),
                        shadowSegment,
                        // what held it is the HeldNotice's (§12); a shadow writes none
                        s.isHeld() ? List.of() : s.violations(),
                        s.sendAt()));
    }

    /** The message as every check reads it, in its zone (the config's where it names none). */
    private static Subject subject(
            CountedHistory history, OutboundMessage m, LimitConfig config, Judging.User user) {
        ZoneClock clock = new ZoneClock(Zones.zone(m.timezone(), config.timezone()));
        return new Subject(history, m, new CalendarCounts(history, clock), user);
    }

    /**
     * Whether the user's history counts a message with this fingerprint where pruning by stamped
     * timestamps alone keeps it (twice the kept window behind the latest stamped one). The job
     * keeps more while messages are stamped ahead of its clock; whether a message is a DUPLICATE
     * must not depend on the clock (contract.md §2), nor differ from a replay's decision.
     */
    private static boolean remembered(
            CountedHistory history, long fingerprint, LimitConfig config, UserPreferences prefs) {
        if (!history.containsFingerprint(fingerprint)) {
            return false;
        }
        HistoryEntry e = history.withFingerprint(fingerprint);
        long kept = UserPreferences.keptMillis(config, prefs);
        return e == null || e.timestamp() > history.latestStamped() - 2 * kept;
    }

    /**
     * Whether the segment's rule alone, as if the user had no preferences and {@code maxHeld} were
     * not there (its limits, quiet hours and {@code hold}), rejects a message that reaches it: the
     * one case in which the message may take held messages' places (contract.md §6, "Preemption").
     */
    public static boolean rejectsAlone(CountedHistory history, OutboundMessage m, Judging j) {
        Subject subject =
                subject(
                        history,
                        m,
                        j.config(),
                        new Judging.User(null, j.lastEngagement(), j.user().lifetime()));
        Under alone =
                Under.rule(
                        j.segment(),
                        j.config().ruleFor(j.segment()),
                        false,
                        Under.HeldBound.none(Long.MIN_VALUE));
        return decide(subject, alone).decision() == Decision.REJECTED;
    }

    /**
     * The rule's verdict on a message at its timestamp, or, when the rule holds messages, at the
     * send time it is held to (contract.md §6).
     */
    private static Verdict decide(Subject s, Under rule) {
        FatigueRule fatigue =
                FatigueRule.at(rule.rule(), s.history(), s.t(), s.user().lastEngagement());
        Verdict v = decideLowered(s, rule.with(fatigue));
        return fatigue.lowers(rule.rule(), s.message()) ? v.underLoweredLimits() : v;
    }

    /** The same, under the rule's limits as its {@code fatigue} lowers them for this message. */
    private static Verdict decideLowered(Subject s, Under u) {
        OutboundMessage m = s.message();
        UserPreferences prefs = s.prefs();
        Rule rule = u.rule();
        List<ScopeLimits> scopes =
                PreferenceRule.withUserLimits(ScopeLimits.of(rule, m, u.fatigue()), m, prefs);
        boolean paused = prefs != null && prefs.pausedAt(m.timestamp());
        List<Violation> lifetime = LifetimeRule.broken(s, u);
        if (prefs != null && prefs.optsOut(m.channel(), m.category())) {
            return neverPasses(s, u, scopes, PreferenceRule.optOuts(prefs, m), lifetime);
        }
        if (!lifetime.isEmpty()) {
            return neverPasses(s, u, scopes, new ArrayList<>(), lifetime);
        }
        if (!rule.defers() && !paused) {
            return LimitCheck.of(s, u, scopes, null, u.findRetry());
        }
        QuietHours hours = rule.quietHoursFor(m.channel());
        QuietTimes quiet =
                hours == null && !paused
                        ? null
                        : new QuietTimes(hours, s.zone(), PreferenceRule.pausedUntil(prefs));
        Verdict v =
                LimitCheck.of(
                        s,
                        u,
                        scopes,
                        quiet,
                        u.findRetry() || rule.deferral().holdMillis() > 0 || paused);
        if (v.decision() == Decision.REJECTED
                && rule.deferral().holdMillis() > 0
                && v.retryAfter() != null
                && v.retryAfter() - m.timestamp() <= rule.deferral().holdMillis()) {
            return held(s.history(), u, v);
        }
        return v;
    }

    /**
     * A message no send time lets through (contract.md §3, §10): of a channel or category its user
     * opted out of, or breaking a lifetime limit. REJECTED, never held, no {@code retryAfter}, with
     * whatever else it breaks at its timestamp: the opt-outs first, the lifetime limits where the
     * campaign's scope begins.
     *
     * @param first the opt-outs, or an empty list the violations are added to
     */
    private static Verdict neverPasses(
            Subject s,
            Under u,
            List<ScopeLimits> scopes,
            List<Violation> first,
            List<Violation> lifetime) {
        OutboundMessage m = s.message();
        UserPreferences prefs = s.prefs();
        QuietHours hours = u.rule().quietHoursFor(m.channel());
        QuietTimes quiet =
                hours == null && (prefs == null || !prefs.pausedAt(m.timestamp()))
                        ? null
                        : new QuietTimes(hours, s.zone(), PreferenceRule.pausedUntil(prefs));
        List<Violation> at = LimitCheck.of(s, u, scopes, quiet, false).violations();
        first.addAll(LifetimeRule.placed(at, lifetime));
        return Verdict.rejected(u.segment(), first, null);
    }

    /**
     * A message the rule's {@code hold} reaches: held to its retry time, or REJECTED with what it
     * breaks at its timestamp and then the bound, when the user's held messages are at {@code
     * maxHeld} (contract.md §3, §6); it may retry once the first waiting one is sent. The count is
     * all that wait, above a maxHeld a config lowered too (§5).
     */
    private static Verdict held(CountedHistory history, Under u, Verdict v) {
        long now = u.held().now();
        int maxHeld = u.held().max();
        if (history.heldWaiting(now, maxHeld) < maxHeld) {
            return Verdict.held(u.segment(), v.retryAfter(), v.violations());
        }
        int waiting = history.heldWaiting(now, Integer.MAX_VALUE);
        List<Violation> violations = new ArrayList<>(v.violations());
        violations.add(Violation.hold(maxHeld, waiting));
        return Verdict.rejected(u.segment(), violations, history.firstHeldWaiting(now));
    }
}
