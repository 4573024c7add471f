package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.Scope;
import io.freqcap.schema.decision.Violation;
import java.util.ArrayList;
import java.util.List;

/**
 * Lifetime limits (contract.md §3): at most max counted messages of the message's campaign, ever,
 * as the user's count of it ({@link Judging.User#lifetime}) says. No send time helps a message that
 * breaks one: it is REJECTED, never held, with {@code retryAfter} null. A {@code reserve} applies
 * as to any limit; {@code fatigue} never lowers one. Plain Java.
 */
final class LifetimeRule {
    private LifetimeRule() {}

    /** The lifetime limits of the rule the message breaks; empty for none. */
    static List<Violation> broken(Subject s, Under u) {
        List<Limit> limits = u.rule().caps().lifetime();
        String campaign = s.message().campaignId();
        if (limits.isEmpty() || campaign == null) {
            return List.of();
        }
        long count = s.user().lifetime();
        List<Violation> out = null;
        for (Limit l : limits) {
            Limit read = l.forPriority(s.message().priority());
            if (count >= read.max()) {
                out = out == null ? new ArrayList<>(1) : out;
                int shown = (int) Math.min(count, Integer.MAX_VALUE);
                out.add(Violation.of(Scope.campaign(campaign).label(), read, shown));
            }
        }
        return out == null ? List.of() : out;
    }

    /**
     * The violations at the message's timestamp with the lifetime ones where its campaign's scope
     * begins: after those of quiet hours, of every message, of its channel and of its category.
     */
    static List<Violation> placed(List<Violation> violations, List<Violation> lifetime) {
        if (lifetime.isEmpty()) {
            return violations;
        }
        int at = 0;
        while (at < violations.size() && before(violations.get(at))) {
            at++;
        }
        List<Violation> out = new ArrayList<>(violations.size() + lifetime.size());
        out.addAll(violations.subList(0, at));
        out.addAll(lifetime);
        out.addAll(violations.subList(at, violations.size()));
        return out;
    }

    private static boolean before(Violation v) {
        String scope = v.scope();
        return v.isQuietHours()
                || scope.equals(Scope.ALL.label())
                || scope.startsWith("channel:")
                || scope.startsWith("category:");
    }
}
