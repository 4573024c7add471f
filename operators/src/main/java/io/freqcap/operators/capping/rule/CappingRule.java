package io.freqcap.operators.capping.rule;

import io.freqcap.schema.common.Zones;
import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.config.QuietHours;
import io.freqcap.schema.config.Scope;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.ShadowDecision;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.Fingerprints;
import io.freqcap.schema.message.OutboundMessage;
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
 * <p>Why one long class: the decision rule of contract.md §5 and §6, in order, with its in-order
 * and out-of-order paths side by side.
 */
public final class CappingRule {
    private CappingRule() {}

    /**
     * Decides one message without counting it: the caller adds an ALLOWED message to the history. A
     * message at or after the latest counted one (the common case) costs a few lookups per limit,
     * however long the history; an earlier one reads the entries its limits' windows can reach.
     *
     * @param segment the segment whose rule applies ({@code *} when none does)
     */
    public static Verdict judge(
            CountedHistory history, OutboundMessage m, LimitConfig config, String segment) {
        return judge(history, m, config, segment, segment);
    }

    /**
     * Decides one message without counting it, and, when the config has shadow rules, what they
     * would decide (for a message that reaches the limits: not EXEMPT, DUPLICATE or STALE).
     *
     * @param shadowSegment the segment whose shadow rule applies ({@code *} when none does)
     */
    public static Verdict judge(
            CountedHistory history,
            OutboundMessage m,
            LimitConfig config,
            String segment,
            String shadowSegment) {
        return judge(history, m, config, segment, shadowSegment, Long.MIN_VALUE);
    }

    /** Decides one message without counting it, where histories may have been cleared. */
    public static Verdict judge(
            CountedHistory history,
            OutboundMessage m,
            LimitConfig config,
            String segment,
            String shadowSegment,
            long sweptHorizon) {
        return judge(history, m, config, segment, shadowSegment, sweptHorizon, Long.MIN_VALUE);
    }

    /**
     * Decides one message without counting it, where histories may have been cleared.
     *
     * @param now the job's wall clock (a backtest's: the latest timestamp decided): held messages
     *     with a later send time are waiting, and count towards {@code maxHeld}
     * @param sweptHorizon the job cleared histories whose counted messages could still share a
     *     window with a message older than this; such a message is STALE, whatever the user's
     *     history says, since the history the job holds may be missing what it needs ({@link
     *     Long#MIN_VALUE}: nothing cleared)
     */
    public static Verdict judge(
            CountedHistory history,
            OutboundMessage m,
            LimitConfig config,
            String segment,
            String shadowSegment,
            long sweptHorizon,
            long now) {
        if (config.isExempt(m.category())) {
            return Verdict.passed(Decision.EXEMPT, segment);
        }
        if (history.containsFingerprint(Fingerprints.of(m.messageId()))) {
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
        LimitConfig.Rule rule = config.ruleFor(segment);
        Verdict v = decide(history, m, segment, rule, calendar, true, now, config.maxHeld());
        if (!config.hasShadow()) {
            return v;
        }
        LimitConfig.Rule shadowRule = config.shadowRuleFor(shadowSegment);
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
                        Integer.MAX_VALUE);
        return v.withShadow(
                new ShadowDecision(s.decision(), shadowSegment, s.violations(), s.sendAt()));
    }

    /**
     * The rule's verdict on a message at its timestamp, or, when the rule holds messages, at the
     * send time it is held to (contract.md §6).
     *
     * @param findRetry whether to work out {@code retryAfter} where nothing reads it but a hold
     *     (not for shadow rules)
     * @param maxHeld how many held messages may wait at {@code now}; one more is REJECTED
     */
    private static Verdict decide(
            CountedHistory history,
            OutboundMessage m,
            String segment,
            LimitConfig.Rule rule,
            CalendarLimits calendar,
            boolean findRetry,
            long now,
            int maxHeld) {
        List<ScopeLimits> scopes = scopes(rule, m);
        if (!rule.defers()) {
            return limits(history, m.timestamp(), segment, scopes, calendar, findRetry, null);
        }
        QuietHours hours = rule.quietHoursFor(m.channel());
        QuietTimes quiet = hours == null ? null : new QuietTimes(hours, calendar.zone());
        Verdict v =
                limits(
                        history,
                        m.timestamp(),
                        segment,
                        scopes,
                        calendar,
                        findRetry || rule.holdMillis() > 0,
                        quiet);
        if (v.decision() == Decision.REJECTED
                && rule.holdMillis() > 0
                && v.retryAfter() != null
                && v.retryAfter() - m.timestamp() <= rule.holdMillis()) {
            int waiting = history.heldWaiting(now, maxHeld);
            if (waiting >= maxHeld) {
                // Held messages are bounded (contract.md §3, §6): what it breaks at its
                // timestamp, then the bound; it may retry once the first waiting one is sent.
                List<Violation> violations = new ArrayList<>(v.violations());
                violations.add(Violation.hold(maxHeld, waiting));
                return Verdict.rejected(segment, violations, history.firstHeldWaiting(now));
            }
            return Verdict.held(segment, v.retryAfter());
        }
        return v;
    }

    /**
     * @param findRetry whether to work out {@code retryAfter}
     * @param quiet the rule's quiet hours for the message's channel, or null
     */
    private static Verdict limits(
            CountedHistory history,
            long t,
            String segment,
            List<ScopeLimits> scopes,
            CalendarLimits calendar,
            boolean findRetry,
            QuietTimes quiet) {
        if (history.isEmpty() || t >= history.latest()) {
            return inOrder(history, t, segment, scopes, calendar, findRetry, quiet);
        }
        return outOfOrder(history, t, segment, scopes, calendar, findRetry, quiet);
    }

    /**
     * The scopes of contract.md §3 the message falls in, with their limits: every message, its
     * channel, its category, its campaign (a message without one is not subject to campaign
     * limits). Scopes without limits are left out.
     */
    static List<ScopeLimits> scopes(LimitConfig.Rule rule, OutboundMessage m) {
        List<ScopeLimits> out = new ArrayList<>(4);
        out.add(new ScopeLimits(Scope.ALL, rule.limits()));
        List<Limit> channel = rule.channelLimits(m.channel());
        if (!channel.isEmpty()) {
            out.add(new ScopeLimits(Scope.channel(m.channel()), channel));
        }
        List<Limit> category = rule.categoryLimits(m.category());
        if (!category.isEmpty()) {
            out.add(new ScopeLimits(Scope.category(m.category()), category));
        }
        if (m.campaignId() != null && !rule.campaign().isEmpty()) {
            out.add(new ScopeLimits(Scope.campaign(m.campaignId()), rule.campaign()));
        }
        return out;
    }

    /**
     * A message at or after every counted one: the fullest interval containing t is (t − w, t], so
     * a limit counts the entries in it. Once rejected, a limit of max L passes again from the L-th
     * latest entry in scope plus w (every entry is at or before t), and the message from the latest
     * of those times.
     */
    private static Verdict inOrder(
            CountedHistory history,
            long t,
            String segment,
            List<ScopeLimits> scopes,
            CalendarLimits calendar,
            boolean findRetry,
            QuietTimes quiet) {
        List<Violation> violations = null;
        boolean never = false;
        boolean anyCalendar = false;
        long retry = t;
        for (ScopeLimits s : scopes) {
            for (int i = 0; i < s.size(); i++) {
                Limit l = s.limit(i);
                never |= l.max() == 0;
                if (l.isCalendar()) {
                    anyCalendar = true;
                    int count = calendar.count(s.scope(), l, t);
                    if (count >= l.max()) {
                        violations = add(violations, Violation.of(s.scope().label(), l, count));
                    }
                    continue;
                }
                int count = history.count(s.scope(), t - l.windowMillis(), t);
                if (count < l.max()) {
                    continue;
                }
                violations = add(violations, Violation.of(s.scope().label(), l, count));
                if (l.max() > 0) {
                    long b = history.kthLatest(s.scope(), l.max());
                    if (b > Long.MAX_VALUE - l.windowMillis()) {
                        never = true; // no time in range
                    } else {
                        retry = Math.max(retry, b + l.windowMillis());
                    }
                }
            }
        }
        boolean quietNow = quiet != null && quiet.isQuiet(t);
        if (violations == null && !quietNow) {
            return Verdict.passed(Decision.ALLOWED, segment);
        }
        Long retryAfter = never ? null : retry;
        if (anyCalendar && !never && findRetry) {
            // Rolling limits pass from `retry` on; calendar ones at period starts, or at `retry`.
            retryAfter =
                    calendar.retryAfter(
                            scopes,
                            t,
                            new long[] {retry},
                            at -> rollingPass(history, scopes, at),
                            quiet);
        } else if (quiet != null && !never && findRetry) {
            long from = retry;
            retryAfter = SendTimes.earliest(t, new long[] {from}, 1, at -> at >= from, quiet);
        }
        return Verdict.rejected(segment, quietFirst(violations, quiet, quietNow), retryAfter);
    }

    /**
     * Whether every rolling limit passes at {@code at}, for a message at or after every counted one
     * (the fullest interval containing {@code at} is then (at − w, at]).
     */
    private static boolean rollingPass(CountedHistory history, List<ScopeLimits> scopes, long at) {
        for (ScopeLimits s : scopes) {
            for (int i = 0; i < s.size(); i++) {
                Limit l = s.limit(i);
                if (!l.isCalendar()
                        && history.count(s.scope(), at - l.windowMillis(), at) >= l.max()) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * A message before the latest counted one: the entries its rolling limits' windows can reach
     * (later than t minus the longest of them) are read, and every interval start is checked.
     */
    private static Verdict outOfOrder(
            CountedHistory history,
            long t,
            String segment,
            List<ScopeLimits> scopes,
            CalendarLimits calendar,
            boolean findRetry,
            QuietTimes quiet) {
        long reach = 0;
        for (ScopeLimits s : scopes) {
            for (int i = 0; i < s.size(); i++) {
                Limit l = s.limit(i);
                if (!l.isCalendar()) {
                    reach = Math.max(reach, l.windowMillis());
                }
            }
        }
        List<IntervalScan.Scoped> read = new ArrayList<>(scopes.size());
        List<Violation> violations = null;
        boolean anyCalendar = false;
        for (ScopeLimits s : scopes) {
            List<Limit> rolling = new ArrayList<>(s.size());
            for (int i = 0; i < s.size(); i++) {
                Limit l = s.limit(i);
                if (l.isCalendar()) {
                    anyCalendar = true;
                } else {
                    rolling.add(l);
                }
            }
            long[] ts =
                    rolling.isEmpty() ? new long[0] : history.timestampsAfter(s.scope(), t - reach);
            read.add(new IntervalScan.Scoped(s.scope(), rolling, ts));
            for (int i = 0; i < s.size(); i++) {
                Limit l = s.limit(i);
                int count =
                        l.isCalendar()
                                ? calendar.count(s.scope(), l, t)
                                : IntervalScan.fullestInterval(ts, ts.length, t, l.windowMillis());
                if (count >= l.max()) {
                    violations = add(violations, Violation.of(s.scope().label(), l, count));
                }
            }
        }
        boolean quietNow = quiet != null && quiet.isQuiet(t);
        if (violations == null && !quietNow) {
            return Verdict.passed(Decision.ALLOWED, segment);
        }
        Long retryAfter = null;
        if (findRetry && anyCalendar) {
            retryAfter =
                    calendar.retryAfter(
                            scopes,
                            t,
                            IntervalScan.candidates(t, read),
                            at -> IntervalScan.passes(at, read),
                            quiet);
        } else if (findRetry && quiet == null) {
            retryAfter = IntervalScan.retryAfter(t, read);
        } else if (findRetry && !IntervalScan.blocks(read)) {
            long[] candidates = IntervalScan.candidates(t, read);
            retryAfter =
                    SendTimes.earliest(
                            t,
                            candidates,
                            candidates.length,
                            at -> IntervalScan.passes(at, read),
                            quiet);
        }
        return Verdict.rejected(segment, quietFirst(violations, quiet, quietNow), retryAfter);
    }

    /** The violations, after the quiet hours' own when the message falls in them. */
    private static List<Violation> quietFirst(
            List<Violation> violations, QuietTimes quiet, boolean quietNow) {
        if (!quietNow) {
            return violations;
        }
        List<Violation> all = new ArrayList<>(violations == null ? 1 : violations.size() + 1);
        all.add(Violation.quietHours(quiet.hours().from(), quiet.hours().to()));
        if (violations != null) {
            all.addAll(violations);
        }
        return all;
    }

    private static List<Violation> add(List<Violation> list, Violation v) {
        if (list == null) {
            list = new ArrayList<>(2);
        }
        list.add(v);
        return list;
    }
}
