package io.freqcap.operators.capping.rule;

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
        // One for the rule and the shadow rule: what one counts, the other reads.
        ZoneClock clock = new ZoneClock(Zones.zone(m.timezone(), config.timezone()));
        CalendarLimits calendar = new CalendarLimits(history, clock);
        Rule rule = config.ruleFor(segment);
        long now = j.now();
        long engaged = j.lastEngagement();
        Verdict v =
                decide(
                        history,
                        m,
                        segment,
                        rule,
                        calendar,
                        true,
                        now,
                        config.maxHeld(),
                        prefs,
                        engaged);
        if (!config.hasShadow()) {
            return v;
        }
        String shadowSegment = j.shadowSegment();
        Rule shadowRule = config.shadowRuleFor(shadowSegment);
        // Shadow rules hold without a bound: maxHeld protects the job's state, which they never
        // fill.
        Verdict s =
                decide(
                        history,
                        m,
                        shadowSegment,
                        shadowRule,
                        calendar,
                        false,
                        now,
                        Integer.MAX_VALUE,
                        prefs,
                        engaged);
        return v.withShadow(
                new ShadowDecision(
                        s.decision(),
                        shadowSegment,
                        // what held it is the HeldNotice's (§12); a shadow writes none
                        s.isHeld() ? List.of() : s.violations(),
                        s.sendAt()));
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
        LimitConfig config = j.config();
        String segment = j.segment();
        ZoneClock clock = new ZoneClock(Zones.zone(m.timezone(), config.timezone()));
        Verdict v =
                decide(
                        history,
                        m,
                        segment,
                        config.ruleFor(segment),
                        new CalendarLimits(history, clock),
                        false,
                        Long.MIN_VALUE,
                        Integer.MAX_VALUE,
                        null,
                        j.lastEngagement());
        return v.decision() == Decision.REJECTED;
    }

    /**
     * The rule's verdict on a message at its timestamp, or, when the rule holds messages, at the
     * send time it is held to (contract.md §6).
     *
     * @param findRetry whether to work out {@code retryAfter} where nothing reads it but a hold
     *     (not for shadow rules)
     * @param maxHeld how many held messages may wait at {@code now}; one more is REJECTED
     * @param lastEngagement the user's last engagement, which the rule's {@code fatigue} reads
     */
    private static Verdict decide(
            CountedHistory history,
            OutboundMessage m,
            String segment,
            Rule rule,
            CalendarLimits calendar,
            boolean findRetry,
            long now,
            int maxHeld,
            UserPreferences prefs,
            long lastEngagement) {
        FatigueRule fatigue = FatigueRule.at(rule, history, m.timestamp(), lastEngagement);
        Verdict v =
                decide(
                        history, m, segment, rule, calendar, findRetry, now, maxHeld, prefs,
                        fatigue);
        return fatigue.lowers(rule, m) ? v.underLoweredLimits() : v;
    }

    /** The same, under the rule's limits as {@code fatigue} lowers them for this message. */
    private static Verdict decide(
            CountedHistory history,
            OutboundMessage m,
            String segment,
            Rule rule,
            CalendarLimits calendar,
            boolean findRetry,
            long now,
            int maxHeld,
            UserPreferences prefs,
            FatigueRule fatigue) {
        List<ScopeLimits> scopes =
                PreferenceRule.withUserLimits(ScopeLimits.of(rule, m, fatigue), m, prefs);
        long pausedUntil = PreferenceRule.pausedUntil(prefs);
        boolean paused = prefs != null && prefs.pausedAt(m.timestamp());
        if (prefs != null && prefs.optsOut(m.channel(), m.category())) {
            return PreferenceRule.optedOut(
                    history, m, segment, rule, scopes, calendar, prefs, fatigue);
        }
        if (!rule.defers() && !paused) {
            return LimitCheck.of(
                    history, m, segment, rule, scopes, calendar, findRetry, null, fatigue);
        }
        QuietHours hours = rule.quietHoursFor(m.channel());
        QuietTimes quiet =
                hours == null && !paused
                        ? null
                        : new QuietTimes(hours, calendar.zone(), pausedUntil);
        Verdict v =
                LimitCheck.of(
                        history,
                        m,
                        segment,
                        rule,
                        scopes,
                        calendar,
                        findRetry || rule.holdMillis() > 0 || paused,
                        quiet,
                        fatigue);
        if (v.decision() == Decision.REJECTED
                && rule.holdMillis() > 0
                && v.retryAfter() != null
                && v.retryAfter() - m.timestamp() <= rule.holdMillis()) {
            if (history.heldWaiting(now, maxHeld) >= maxHeld) {
                // Held messages are bounded (contract.md §3, §6): what it breaks at its
                // timestamp, then the bound; it may retry once the first waiting one is sent.
                // The count is all that wait, above a maxHeld a config lowered too (§5).
                int waiting = history.heldWaiting(now, Integer.MAX_VALUE);
                List<Violation> violations = new ArrayList<>(v.violations());
                violations.add(Violation.hold(maxHeld, waiting));
                return Verdict.rejected(segment, violations, history.firstHeldWaiting(now));
            }
            return Verdict.held(segment, v.retryAfter(), v.violations());
        }
        return v;
    }
}
