package io.freqcap.operators.capping;

import io.freqcap.schema.Limit;
import io.freqcap.schema.Scope;
import java.util.List;

/**
 * The limits of one scope a message falls in (contract.md §3), rolling and calendar. An array: the
 * decision loops over these for every message, and an iterator of the config's unmodifiable lists
 * is a call no inlining reaches.
 */
record ScopeLimits(Scope scope, Limit[] limits) {
    ScopeLimits(Scope scope, List<Limit> limits) {
        this(scope, limits.toArray(new Limit[0]));
    }
}
