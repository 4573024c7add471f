package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Fatigue;
import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.config.Scope;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.message.OutboundMessage;
import java.util.ArrayList;
import java.util.List;

/**
 * A rule's {@code fatigue} for one message (contract.md §3, §6 "Fatigue"): the user's unengaged
 * count u, read once at the message's timestamp t from the same counted history the limits read,
 * and the limits as it lowers them. Plain Java: no Flink types.
 *
 * <p>u counts the user's counted messages whose send time lies in (e, t], e the later of t minus
 * {@code fatigue.window} and the user's last engagement: a held message not yet sent (counted at a
 * send time after t) is not unengaged, and one open restores the full cap.
 *
 * @param fatigue the rule's, or null for a rule that has none
 * @param unengaged u
 */
record FatigueRule(Fatigue fatigue, long unengaged) {
    /** A rule without {@code fatigue}, or a user short of one step: the config's own limits. */
    static final FatigueRule NONE = new FatigueRule(null, 0);

    /**
     * The rule's fatigue for a message at {@code t}.
     *
     * @param lastEngagement the user's last engagement ({@link Long#MIN_VALUE}: none yet)
     */
    static FatigueRule at(Rule rule, CountedHistory history, long t, long lastEngagement) {
        Fatigue f = rule.fatigue();
        if (f == null || history.isEmpty()) {
            return NONE;
        }
        long from = Math.max(t - f.windowMillis(), lastEngagement);
        if (from >= t) {
            return NONE;
        }
        long u = history.count(Scope.ALL, from, t);
        return u < f.after() ? NONE : new FatigueRule(f, u);
    }

    /** Whether u makes a step: then a limit of max above its floor applies lowered. */
    boolean steps() {
        return fatigue != null;
    }

    /** The limits as u lowers them: the same list when it lowers none. */
    List<Limit> apply(List<Limit> limits) {
        if (!steps() || !lowersAny(limits)) {
            return limits;
        }
        List<Limit> out = new ArrayList<>(limits.size());
        for (Limit l : limits) {
            int m = fatigue.lowered(l.max(), unengaged);
            out.add(m < l.max() ? l.lowered(m, unengaged) : l);
        }
        return out;
    }

    /**
     * Whether u lowers a limit the message falls under, in any scope of the rule: the message is
     * then decided under a lowered cap (the {@code fatigued} metric, contract.md §9).
     */
    boolean lowers(Rule rule, OutboundMessage m) {
        if (!steps()) {
            return false;
        }
        boolean campaign = m.campaignId() != null;
        return lowersAny(rule.caps().all())
                || lowersAny(rule.channelLimits(m.channel()))
                || lowersAny(rule.categoryLimits(m.category()))
                || (campaign && lowersAny(rule.caps().campaign()))
                || (campaign && lowersAny(rule.caps().campaigns()));
    }

    private boolean lowersAny(List<Limit> limits) {
        for (int i = 0; i < limits.size(); i++) {
            Limit l = limits.get(i);
            if (fatigue.lowered(l.max(), unengaged) < l.max()) {
                return true;
            }
        }
        return false;
    }
}
