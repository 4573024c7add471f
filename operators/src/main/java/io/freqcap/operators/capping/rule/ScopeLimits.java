package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.Scope;
import io.freqcap.schema.decision.Violation;
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
    /** A rule's limits. */
    public ScopeLimits(Scope scope, List<Limit> limits) {
        this(scope, limits, false);
    }

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
}
