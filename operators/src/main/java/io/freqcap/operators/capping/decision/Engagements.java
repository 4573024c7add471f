package io.freqcap.operators.capping.decision;

/**
 * Where a {@link DecisionStep} finds a user's last engagement (contract.md §11), which a rule's
 * {@code fatigue} reads, and where {@link Stores} keeps a later one: the job's keyed state, or a
 * backtest's memory ({@code freqcap-simulate --receipts}).
 */
public interface Engagements {
    /** The last engagement of {@code user} (in the job: the current key); none: MIN_VALUE. */
    long lastOf(long user) throws Exception;

    /** Makes {@code at} the last engagement of {@code user} when it is later than the one kept. */
    void engage(long user, long at) throws Exception;

    /** Nobody engages (a caller without receipts). */
    Engagements NONE =
            new Engagements() {
                @Override
                public long lastOf(long user) {
                    return Long.MIN_VALUE;
                }

                @Override
                public void engage(long user, long at) {}
            };
}
