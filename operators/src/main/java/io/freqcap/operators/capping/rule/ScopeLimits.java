package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.config.Scope;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.message.OutboundMessage;
import java.util.ArrayList;
import java.util.List;

/**
 * The limits of one scope a message falls in (contract.md §3), rolling and calendar: the config's
 * own list, not a copy (a copy per scope per message is a measurable share of a decision). Read it
 * by index ({@link #size}, {@link #limit}): an iterator of the config's unmodifiable lists is an
 * allocation and a call per limit that inlining may not reach.
 *
 * @param preference whether these are the user's own limits (contract.md §10), which count the same
 *     entries but are reported as {@code preference:<scope>}
 */
public record ScopeLimits(Scope scope, List<Limit> limits, boolean preference) {
    int size() {
        return limits.size();
    }

    Limit limit(int i) {
        return limits.get(i);
    }

    /** The scope as a violation names it; computed only for a violation. */
    String label() {
        return preference ? Violation.PREFERENCE + scope.label() : scope.label();
    }

    /** The rule's scopes the message falls in (contract.md §3), in a list the caller may extend. */
    static List<ScopeLimits> of(Rule rule, OutboundMessage m, FatigueRule fatigue) {
        int p = m.priority();
        List<ScopeLimits> out = new ArrayList<>(4);
        out.add(
                new ScopeLimits(
                        Scope.ALL, forPriority(fatigue.apply(rule.caps().all()), p), false));
        List<Limit> channel = rule.channelLimits(m.channel());
        if (!channel.isEmpty()) {
            out.add(of(Scope.channel(m.channel()), channel, fatigue, p));
        }
        List<Limit> category = rule.categoryLimits(m.category());
        if (!category.isEmpty()) {
            out.add(of(Scope.category(m.category()), category, fatigue, p));
        }
        if (m.campaignId() != null && !rule.caps().campaign().isEmpty()) {
            out.add(of(Scope.campaign(m.campaignId()), rule.caps().campaign(), fatigue, p));
        }
        return out;
    }

    /**
     * A scope of the rule's, its limits as fatigue lowers them and priority {@code p} reads them.
     */
    private static ScopeLimits of(Scope scope, List<Limit> limits, FatigueRule fatigue, int p) {
        return new ScopeLimits(scope, forPriority(fatigue.apply(limits), p), false);
    }

    /**
     * The limits as a message of priority {@code p} reads them (contract.md §6, "Reserved places"):
     * the config's own list when none keeps places from it, as for every config without {@code
     * reserve}.
     */
    static List<Limit> forPriority(List<Limit> limits, int p) {
        for (int i = 0; i < limits.size(); i++) {
            if (limits.get(i).forPriority(p) != limits.get(i)) {
                List<Limit> out = new ArrayList<>(limits.size());
                for (Limit l : limits) {
                    out.add(l.forPriority(p));
                }
                return out;
            }
        }
        return limits;
    }
}
