package io.freqcap.operators.capping.rule;

import io.freqcap.operators.capping.history.HistoryGrowth;
import io.freqcap.operators.capping.history.LongHistory;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.ShadowDecision;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.preference.UserPreferences;
import java.util.List;

/**
 * The rule's verdict and the counting, as the job applies them ({@link CappingRule#judge}, then
 * {@link HistoryGrowth#grown} when ALLOWED, at the send time of a held message), for tests that
 * drive one user's history by hand. The history stays a {@link UserHistory} however long it grows,
 * so that a test may decide two messages against the same history.
 */
public final class RuleStep {
    private RuleStep() {}

    /** A verdict and the history after it. */
    public record Result(
            Decision decision,
            String segment,
            List<Violation> violations,
            Long retryAfter,
            String reason,
            ShadowDecision shadow,
            Long sendAt,
            UserHistory history,
            boolean lowered) {}

    public static Result decide(
            UserHistory history, OutboundMessage m, LimitConfig config, String segment) {
        return decide(history, m, config, segment, Judging.User.NONE);
    }

    /**
     * @param user the user's preferences (null for none) and last engagement (contract.md §11,
     *     MIN_VALUE for none)
     */
    public static Result decide(
            UserHistory history,
            OutboundMessage m,
            LimitConfig config,
            String segment,
            Judging.User user) {
        Verdict v =
                CappingRule.judge(
                        history,
                        m,
                        new Judging(config, segment, segment, Judging.Times.NONE, user));
        UserHistory next = history;
        if (v.decision() == Decision.ALLOWED) {
            long countedAt = v.isHeld() ? v.sendAt() : m.timestamp();
            CountedHistory grown =
                    HistoryGrowth.grown(
                            history,
                            HistoryGrowth.entry(m, countedAt, false, config),
                            UserPreferences.keptMillis(config, user.prefs()));
            next = grown instanceof LongHistory l ? l.toUserHistory() : (UserHistory) grown;
        }
        return new Result(
                v.decision(),
                v.segment(),
                v.violations(),
                v.retryAfter(),
                v.reason(),
                v.shadow(),
                v.sendAt(),
                next,
                v.lowered());
    }
}
