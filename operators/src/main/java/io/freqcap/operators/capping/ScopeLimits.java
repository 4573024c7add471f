package io.freqcap.operators.capping;

import io.freqcap.schema.Limit;
import io.freqcap.schema.Scope;
import java.util.List;

/** The limits of one scope a message falls in (contract.md §3), rolling and calendar. */
record ScopeLimits(Scope scope, List<Limit> limits) {}
