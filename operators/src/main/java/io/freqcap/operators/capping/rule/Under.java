package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Rule;

/**
 * The rule a message is judged under: the segment's or the shadow one, with what it reads besides
 * the {@link Subject}.
 *
 * @param segment the segment the rule is named for in the verdict
 * @param fatigue what the rule's {@code fatigue} makes of the user ({@link FatigueRule#NONE} until
 *     {@link CappingRule} reads it)
 * @param findRetry whether to work out {@code retryAfter} where nothing reads it but a hold (not
 *     for shadow rules)
 * @param held how many held messages may wait, and when
 */
record Under(String segment, Rule rule, FatigueRule fatigue, boolean findRetry, HeldBound held) {

    /** A rule before its fatigue is read. */
    static Under rule(String segment, Rule rule, boolean findRetry, HeldBound held) {
        return new Under(segment, rule, FatigueRule.NONE, findRetry, held);
    }

    Under with(FatigueRule f) {
        return new Under(segment, rule, f, findRetry, held);
    }

    /**
     * The bound on a user's held messages (contract.md §3 {@code maxHeld}): at most {@code max} may
     * wait at {@code now}, the job's wall clock; one more is REJECTED.
     */
    record HeldBound(long now, int max) {
        /** No bound: shadow rules never fill the job's state, and preemption asks without one. */
        static HeldBound none(long now) {
            return new HeldBound(now, Integer.MAX_VALUE);
        }
    }
}
