package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.Scope;
import java.util.List;

/**
 * The limits of one scope a message falls in (contract.md §3), rolling and calendar: the config's
 * own list, not a copy (a copy per scope per message is a measurable share of a decision). Read it
 * by index ({@link #size}, {@link #limit}): an iterator of the config's unmodifiable lists is an
 * allocation and a call per limit that inlining may not reach.
 */
public record ScopeLimits(Scope scope, List<Limit> limits) {
    int size() {
        return limits.size();
    }

    Limit limit(int i) {
        return limits.get(i);
    }
}
