package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.message.OutboundMessage;
import java.util.ArrayList;
import java.util.List;

/**
 * The limits of one rule checked for a message at time {@code t} (contract.md §6): the violations,
 * and when asked the earliest time it would pass ({@code retryAfter}). A message at or after every
 * counted one (the common case) costs a few lookups per limit, however long the history; an earlier
 * one reads the entries its rolling limits' windows can reach.
 *
 * @param scopes the scopes the message falls in, with their limits
 * @param findRetry whether to work out {@code retryAfter}
 * @param quiet the rule's quiet hours for the message's channel, or null
 * @param campaigns the rule's {@code campaigns} limits for the message's campaign; null when it has
 *     none or the message no campaign
 */
record LimitCheck(
        CountedHistory history,
        long t,
        String segment,
        List<ScopeLimits> scopes,
        CalendarLimits calendar,
        boolean findRetry,
        QuietTimes quiet,
        DistinctCampaigns campaigns) {

    /**
     * The verdict of the rule's limits and the user's ({@code scopes}) on message {@code m} at its
     * timestamp, with the rule's {@code campaigns} limits.
     */
    static Verdict of(
            CountedHistory history,
            OutboundMessage m,
            String segment,
            Rule rule,
            List<ScopeLimits> scopes,
            CalendarLimits calendar,
            boolean findRetry,
            QuietTimes quiet,
            FatigueRule fatigue) {
        return new LimitCheck(
                        history,
                        m.timestamp(),
                        segment,
                        scopes,
                        calendar,
                        findRetry,
                        quiet,
                        ScopeLimits.campaigns(history, rule, m, calendar.zone(), fatigue))
                .verdict();
    }

    Verdict verdict() {
        Verdict v = history.isEmpty() || t >= history.latest() ? inOrder() : outOfOrder();
        return campaigns == null ? v : withCampaigns(v);
    }

    /**
     * The verdict of the other limits and quiet hours, with the campaigns limits' violations after
     * theirs; {@code retryAfter} the earliest time both pass.
     */
    private Verdict withCampaigns(Verdict v) {
        List<Violation> distinct = campaigns.violations(t);
        if (distinct.isEmpty() && v.decision() == Decision.ALLOWED) {
            return v;
        }
        List<Violation> all = new ArrayList<>(v.violations());
        all.addAll(distinct);
        return Verdict.rejected(segment, all, findRetry ? retryWithCampaigns(v) : null);
    }

    /**
     * From the other limits' earliest passing time, alternately the campaigns limits' and theirs
     * until both pass at one time: each step only moves later.
     */
    private Long retryWithCampaigns(Verdict v) {
        Long r = v.decision() == Decision.ALLOWED ? Long.valueOf(t) : v.retryAfter();
        while (r != null) {
            Long c = campaigns.earliest(r);
            if (c == null || c.longValue() == r.longValue()) {
                return c;
            }
            Verdict others =
                    new LimitCheck(history, c, segment, scopes, calendar, true, quiet, null)
                            .verdict();
            r = others.decision() == Decision.ALLOWED ? c : others.retryAfter();
        }
        return null;
    }

    /**
     * A message at or after every counted one: the fullest interval containing t is (t − w, t], so
     * a limit counts the entries in it. Once rejected, a limit of max L passes again from the L-th
     * latest entry in scope plus w (every entry is at or before t), and the message from the latest
     * of those times.
     */
    private Verdict inOrder() {
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
                        violations = add(violations, Violation.of(s.label(), l, count));
                    }
                    continue;
                }
                int count = history.count(s.scope(), t - l.windowMillis(), t);
                if (count < l.max()) {
                    continue;
                }
                violations = add(violations, Violation.of(s.label(), l, count));
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
                    calendar.retryAfter(scopes, t, new long[] {retry}, this::rollingPass, quiet);
        } else if (quiet != null && !never && findRetry) {
            long from = retry;
            retryAfter = SendTimes.earliest(t, new long[] {from}, 1, at -> at >= from, quiet);
        }
        return Verdict.rejected(segment, quietFirst(violations, quietNow), retryAfter);
    }

    /**
     * Whether every rolling limit passes at {@code at}, for a message at or after every counted one
     * (the fullest interval containing {@code at} is then (at − w, at]).
     */
    private boolean rollingPass(long at) {
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
    private Verdict outOfOrder() {
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
                    violations = add(violations, Violation.of(s.label(), l, count));
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
        return Verdict.rejected(segment, quietFirst(violations, quietNow), retryAfter);
    }

    /** The violations, after the quiet hours' own when the message falls in them. */
    private List<Violation> quietFirst(List<Violation> violations, boolean quietNow) {
        if (!quietNow) {
            return violations;
        }
        List<Violation> all = quiet.violationsAt(t);
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
