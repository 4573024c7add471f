package io.freqcap.operators.capping.decision;

/**
 * Where a {@link DecisionStep} finds a user's lifetime count of a campaign (contract.md §3), which
 * a rule's lifetime limits read, and where {@link Stores} counts and un-counts: the job's keyed
 * state, or a backtest's memory. Counting starts once a config with a lifetime limit is in force;
 * until then nothing is counted.
 */
public interface Lifetimes {
    /**
     * The count of {@code campaign} of {@code user} (in the job: the current key) as a message
     * stamped {@code t} reads it: 0 once the campaign's latest send time lies the retention or more
     * before {@code t}.
     */
    long countAt(long user, String campaign, long t) throws Exception;

    /**
     * Counts a message of {@code campaign} stamped {@code t}, counted at {@code sendAt}: a count
     * that {@code t} reads as 0 starts afresh from it.
     */
    void count(long user, String campaign, long t, long sendAt) throws Exception;

    /** A message of {@code campaign} stopped being counted: one less, never below 0. */
    void uncount(long user, String campaign) throws Exception;

    /** Nothing counted (a caller without lifetime limits). */
    Lifetimes NONE =
            new Lifetimes() {
                @Override
                public long countAt(long user, String campaign, long t) {
                    return 0;
                }

                @Override
                public void count(long user, String campaign, long t, long sendAt) {}

                @Override
                public void uncount(long user, String campaign) {}
            };
}
