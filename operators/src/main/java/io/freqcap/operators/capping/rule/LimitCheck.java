package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.message.OutboundMessage;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * The limits of one rule checked for a message at time {@code t} (contract.md §6): the violations,
 * and when asked the earliest time it would pass ({@code retryAfter}). A message at or after every
 * counted one (the common case) costs a few lookups per limit, however long the history; an earlier
 * one reads the entries its rolling limits' windows can reach.
 */
final class LimitCheck {
    private final CountedHistory history;
    private final long t;
    private final String segment;
    private final List<ScopeLimits> scopes; // the message's, with their limits
    private final CalendarLimits calendar;
    private final boolean findRetry; // whether to work out retryAfter
    private final QuietTimes quiet; // for the message's channel, or null
    private final DistinctCampaigns campaigns; // null without them or a campaign

    private LimitCheck(
            Subject s, Under u, List<ScopeLimits> scopes, QuietTimes quiet, boolean findRetry) {
        this.history = s.history();
        this.t = s.t();
        this.segment = u.segment();
        this.scopes = scopes;
        this.calendar = new CalendarLimits(s.calendar(), scopes);
        this.findRetry = findRetry;
        this.quiet = quiet;
        this.campaigns = campaigns(s, u);
    }

    /**
     * The verdict of the rule's limits and the user's ({@code scopes}) on the message at its
     * timestamp, with the rule's {@code campaigns} limits.
     *
     * @param quiet the rule's quiet hours for the message's channel, or null
     * @param findRetry whether to work out {@code retryAfter}
     */
    static Verdict of(
            Subject s, Under u, List<ScopeLimits> scopes, QuietTimes quiet, boolean findRetry) {
        return new LimitCheck(s, u, scopes, quiet, findRetry).verdict();
    }

    /** The rule's {@code campaigns} limits for the message; null without them or a campaign. */
    private static DistinctCampaigns campaigns(Subject s, Under u) {
        OutboundMessage m = s.message();
        Rule rule = u.rule();
        if (m.campaignId() == null || rule.caps().campaigns().isEmpty()) {
            return null;
        }
        return new DistinctCampaigns(
                s.history(),
                ScopeLimits.forPriority(u.fatigue().apply(rule.caps().campaigns()), m.priority()),
                m.campaignId(),
                s.zone());
    }

    Verdict verdict() {
        Verdict v = inOrder() ? verdict(scanInOrder()) : verdict(scanOutOfOrder());
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
     * The earliest time at or after t, outside quiet hours, at which the other limits and the
     * campaigns limits both pass: one search over both sides' candidates, each side answering for
     * ascending times from what it worked out for the time before. (Asking each side in turn for
     * its earliest time from the other's could take as many rounds as the history has entries, each
     * reading it whole: seconds for one late message of a heavy user.)
     */
    private Long retryWithCampaigns(Verdict v) {
        if (campaigns.blocks() || (v.decision() != Decision.ALLOWED && v.retryAfter() == null)) {
            return null; // one side never passes
        }
        DistinctCampaigns.Sweep sweep = campaigns.sweep(t);
        return inOrder() ? retryAfter(scanInOrder(), sweep) : retryAfter(scanOutOfOrder(), sweep);
    }

    /** Whether the message is at or after every counted one. */
    private boolean inOrder() {
        return history.isEmpty() || t >= history.latest();
    }

    /**
     * What the limits found, for either kind of message.
     *
     * @param violations null when none
     * @param retry for a message in order: the earliest time its rolling limits pass
     * @param never for a message in order: no time passes (a max of 0, or none in range)
     * @param read for a message out of order: the entries its rolling limits' windows reach
     */
    private record Scan(
            List<Violation> violations,
            boolean anyCalendar,
            long retry,
            boolean never,
            List<IntervalScan.Scoped> read) {}

    /**
     * The verdict of the other limits and quiet hours. (The campaigns limits' search with them
     * takes {@link #retryAfter(Scan, DistinctCampaigns.Sweep)} apart: one method with a branch for
     * each kept the JIT deoptimizing it hundreds of times a second, issue 61.)
     */
    private Verdict verdict(Scan scan) {
        boolean quietNow = quiet != null && quiet.isQuiet(t);
        if (scan.violations() == null && !quietNow) {
            return Verdict.passed(Decision.ALLOWED, segment);
        }
        return Verdict.rejected(
                segment, quietFirst(scan.violations(), quietNow), retryAfter(scan, null));
    }

    /**
     * When asked, the earliest time at or after t, outside quiet hours, at which the limits pass
     * (and those of {@code extra}, when not null); null otherwise or when none does.
     */
    private Long retryAfter(Scan scan, DistinctCampaigns.Sweep extra) {
        return scan.read() == null ? inOrderRetry(scan, extra) : outOfOrderRetry(scan, extra);
    }

    /**
     * The candidates of the other limits and those of {@code extra}, ascending (repeats kept: the
     * searches skip them).
     */
    private static long[] with(long[] candidates, int n, DistinctCampaigns.Sweep extra) {
        if (extra == null) {
            return n == candidates.length ? candidates : Arrays.copyOf(candidates, n);
        }
        long[] all = Arrays.copyOf(candidates, n + extra.n());
        System.arraycopy(extra.at(), 0, all, n, extra.n());
        Arrays.sort(all);
        return all;
    }

    private static LongPredicate and(LongPredicate others, DistinctCampaigns.Sweep extra) {
        return extra == null ? others : at -> others.test(at) && extra.passes().test(at);
    }

    /**
     * A message at or after every counted one: the fullest interval containing t is (t − w, t], so
     * a limit counts the entries in it. Once rejected, a limit of max L passes again from the L-th
     * latest entry in scope plus w (every entry is at or before t), and the message from the latest
     * of those times.
     */
    private Scan scanInOrder() {
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
        return new Scan(violations, anyCalendar, retry, never, null);
    }

    /** {@link #retryAfter(Scan, DistinctCampaigns.Sweep)} for a message in order. */
    private Long inOrderRetry(Scan scan, DistinctCampaigns.Sweep extra) {
        boolean never = scan.never();
        long retry = scan.retry();
        Long retryAfter = never ? null : retry;
        if (scan.anyCalendar() && !never && findRetry) {
            // Rolling limits pass from `retry` on; calendar ones at period starts, or at `retry`.
            retryAfter =
                    calendar.retryAfter(
                            t,
                            with(new long[] {retry}, 1, extra),
                            and(this::rollingPass, extra),
                            quiet);
        } else if ((quiet != null || extra != null) && !never && findRetry) {
            long from = retry;
            long[] candidates = with(new long[] {from}, 1, extra);
            retryAfter =
                    QuietTimes.earliest(
                            t, candidates, candidates.length, and(at -> at >= from, extra), quiet);
        }
        return retryAfter;
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
    private Scan scanOutOfOrder() {
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
        return new Scan(violations, anyCalendar, t, false, read);
    }

    /** {@link #retryAfter(Scan, DistinctCampaigns.Sweep)} for a message out of order. */
    private Long outOfOrderRetry(Scan scan, DistinctCampaigns.Sweep extra) {
        List<IntervalScan.Scoped> read = scan.read();
        Long retryAfter = null;
        if (findRetry && scan.anyCalendar()) {
            long[] own = IntervalScan.candidates(t, read);
            retryAfter =
                    calendar.retryAfter(
                            t,
                            with(own, own.length, extra),
                            and(new RollingPasses(read), extra),
                            quiet);
        } else if (findRetry && quiet == null && extra == null) {
            retryAfter = IntervalScan.retryAfter(t, read);
        } else if (findRetry && !IntervalScan.blocks(read)) {
            long[] own = IntervalScan.candidates(t, read);
            long[] candidates = with(own, own.length, extra);
            retryAfter =
                    QuietTimes.earliest(
                            t,
                            candidates,
                            candidates.length,
                            and(new RollingPasses(read), extra),
                            quiet);
        }
        return retryAfter;
    }

    /** The violations, after the quiet hours' own when the message falls in them. */
    private List<Violation> quietFirst(List<Violation> violations, boolean quietNow) {
        if (!quietNow) {
            return violations == null ? List.of() : violations;
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
