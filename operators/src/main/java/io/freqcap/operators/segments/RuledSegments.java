package io.freqcap.operators.segments;

import io.freqcap.schema.config.LimitConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiPredicate;

/**
 * The segments a config has a rule for (or a shadow rule), by priority: worked out once per config
 * and segment change, not once per message.
 */
final class RuledSegments {
    private final BiPredicate<LimitConfig, String> hasRule;
    private KnownSegment[] ruled = new KnownSegment[0];
    private LimitConfig under;

    RuledSegments(BiPredicate<LimitConfig, String> hasRule) {
        this.hasRule = hasRule;
    }

    /** Of {@code byPriority}, those with a rule in {@code config}. */
    KnownSegment[] under(LimitConfig config, KnownSegment[] byPriority) {
        if (config != under) {
            List<KnownSegment> r = new ArrayList<>();
            for (KnownSegment s : byPriority) {
                if (hasRule.test(config, s.id)) {
                    r.add(s);
                }
            }
            ruled = r.toArray(new KnownSegment[0]);
            under = config;
        }
        return ruled;
    }

    /** Forgets what it worked out: the segments changed. */
    void clear() {
        under = null;
    }
}
