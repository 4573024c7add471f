package io.freqcap.operators.capping;

import io.freqcap.schema.Decision;
import io.freqcap.schema.Limit;
import io.freqcap.schema.LimitConfig;
import io.freqcap.schema.OutboundMessage;
import io.freqcap.schema.UserHistory;
import io.freqcap.schema.Violation;
import java.util.ArrayList;
import java.util.Arrays;
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
 */
public final class CappingRule {
    private CappingRule() {}

    /**
     * What to do with a message and the user's history afterwards.
     *
     * @param history the history to store: a new one for ALLOWED, the given one otherwise
     */
    public record Verdict(
            Decision decision,
            String segment,
            List<Violation> violations,
            Long retryAfter,
            String reason,
            UserHistory history) {}

    /**
     * Decides one message.
     *
     * @param segment the segment whose rule applies ({@code *} when none does)
     */
    public static Verdict decide(
            UserHistory history, OutboundMessage m, LimitConfig config, String segment) {
        return decide(history, m, config, segment, false);
    }

    /**
     * Decides one message.
     *
     * @param segment the segment whose rule applies ({@code *} when none does)
     * @param keepMessageId keep the messageId of an ALLOWED message in the history (the Redis
     *     mirror's rebuild needs it)
     */
    public static Verdict decide(
            UserHistory history,
            OutboundMessage m,
            LimitConfig config,
            String segment,
            boolean keepMessageId) {
        if (config.isExempt(m.category())) {
            return new Verdict(Decision.EXEMPT, segment, List.of(), null, null, history);
        }
        long fingerprint = UserHistory.fingerprint(m.messageId());
        if (history.containsFingerprint(fingerprint)) {
            return new Verdict(
                    Decision.DUPLICATE,
                    segment,
                    List.of(),
                    null,
                    "messageId " + m.messageId() + " is already counted for this user",
                    history);
        }
        long t = m.timestamp();
        long longest = config.longestWindowMillis();
        if (!history.isEmpty() && t < history.latest() - longest) {
            return new Verdict(
                    Decision.STALE,
                    segment,
                    List.of(),
                    null,
                    "timestamp "
                            + t
                            + " is older than the latest counted timestamp "
                            + history.latest()
                            + " minus the longest window ("
                            + longest
                            + " ms)",
                    history);
        }

        LimitConfig.Rule rule = config.ruleFor(segment);
        List<Limit> channelLimits = rule.channelLimits(m.channel());
        long[] all = new long[history.size()];
        int nAll = history.timestampsIn(null, all);
        long[] inChannel = null;
        int nChannel = 0;
        if (!channelLimits.isEmpty()) {
            inChannel = new long[history.size()];
            nChannel = history.timestampsIn(m.channel(), inChannel);
        }

        List<Violation> violations = null;
        for (Limit l : rule.limits()) {
            int count = fullestInterval(all, nAll, t, l.windowMillis());
            if (count >= l.max()) {
                violations = add(violations, new Violation("all", l.window(), l.max(), count));
            }
        }
        for (Limit l : channelLimits) {
            int count = fullestInterval(inChannel, nChannel, t, l.windowMillis());
            if (count >= l.max()) {
                violations =
                        add(
                                violations,
                                new Violation(
                                        "channel:" + m.channel(), l.window(), l.max(), count));
            }
        }
        if (violations == null) {
            UserHistory next =
                    history.with(t, fingerprint, m.channel(), keepMessageId ? m.messageId() : null);
            next = next.prunedBefore(next.latest() - 2 * longest);
            return new Verdict(Decision.ALLOWED, segment, List.of(), null, null, next);
        }
        Long retryAfter =
                retryAfter(t, rule.limits(), all, nAll, channelLimits, inChannel, nChannel);
        return new Verdict(Decision.REJECTED, segment, violations, retryAfter, null, history);
    }

    private static List<Violation> add(List<Violation> list, Violation v) {
        if (list == null) {
            list = new ArrayList<>(2);
        }
        list.add(v);
        return list;
    }

    /**
     * The most entries of {@code ts[0..n)} (ascending) that any interval [s, s + w) with s in (t −
     * w, t] holds. Differences, not sums, are compared so that no timestamp can overflow.
     */
    static int fullestInterval(long[] ts, int n, long t, long w) {
        // The interval starting at t itself.
        int lo = lowerBound(ts, n, t);
        int j = lo;
        while (j < n && ts[j] - t < w) {
            j++;
        }
        int best = j - lo;
        // Intervals starting at an entry b with t - w < b <= t.
        int i = lowerBound(ts, n, t - w + 1);
        j = i;
        for (; i < n && ts[i] <= t; i++) {
            if (i > 0 && ts[i - 1] == ts[i] && ts[i - 1] > t - w) {
                continue; // same start as the previous entry, already counted
            }
            if (j < i) {
                j = i;
            }
            while (j < n && ts[j] - ts[i] < w) {
                j++;
            }
            best = Math.max(best, j - i);
        }
        return best;
    }

    private static int lowerBound(long[] ts, int n, long key) {
        int lo = 0;
        int hi = n;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (ts[mid] < key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * The earliest time at or after t at which the same message would pass every limit if nothing
     * else were counted, or {@code null} when a limit of 0 means never.
     *
     * <p>Between candidate times the fullest interval containing the message can only grow or stay:
     * it shrinks only when an entry b leaves every interval containing the time, which happens at b
     * + w. So the answer is t or one of those b + w, and the first candidate that passes is it.
     */
    static Long retryAfter(
            long t,
            List<Limit> limits,
            long[] all,
            int nAll,
            List<Limit> channelLimits,
            long[] inChannel,
            int nChannel) {
        int candidates = 0;
        long[] cand = new long[1 + nAll * (limits.size() + channelLimits.size())];
        for (Limit l : limits) {
            if (l.max() == 0) {
                return null;
            }
            candidates = addCandidates(cand, candidates, all, nAll, t, l.windowMillis());
        }
        for (Limit l : channelLimits) {
            if (l.max() == 0) {
                return null;
            }
            candidates = addCandidates(cand, candidates, inChannel, nChannel, t, l.windowMillis());
        }
        Arrays.sort(cand, 0, candidates);
        for (int c = 0; c < candidates; c++) {
            long at = cand[c];
            if (c > 0 && cand[c - 1] == at) {
                continue;
            }
            if (passes(at, limits, all, nAll) && passes(at, channelLimits, inChannel, nChannel)) {
                return at;
            }
        }
        // Unreachable while every max >= 1: past the last entry plus the longest window,
        // every interval holds only the message itself.
        return null;
    }

    private static int addCandidates(long[] cand, int n, long[] ts, int len, long t, long w) {
        for (int i = 0; i < len; i++) {
            if (ts[i] <= Long.MAX_VALUE - w && ts[i] + w > t) {
                cand[n++] = ts[i] + w;
            }
        }
        return n;
    }

    private static boolean passes(long at, List<Limit> limits, long[] ts, int n) {
        for (Limit l : limits) {
            if (fullestInterval(ts, n, at, l.windowMillis()) >= l.max()) {
                return false;
            }
        }
        return true;
    }
}
