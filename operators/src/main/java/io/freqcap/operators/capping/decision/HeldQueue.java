package io.freqcap.operators.capping.decision;

import io.freqcap.schema.held.HeldDelivery;
import java.util.List;

/**
 * Where a {@link DecisionStep} finds a user's held messages when a message may take the place of
 * one (contract.md §6, "Preemption"), and gives up the ones it takes: the job's keyed state, or a
 * backtest's memory.
 */
public interface HeldQueue {
    /**
     * The held messages of {@code user} (in the job: the current key) whose send time is later than
     * {@code after}, in any order.
     */
    List<HeldDelivery> waitingAfter(long user, long after) throws Exception;

    /** Takes these held messages of {@code user} out: they will not be delivered. */
    void take(long user, List<HeldDelivery> preempted) throws Exception;

    /** No held messages at all (a caller that holds none, as some test oracles). */
    HeldQueue NONE =
            new HeldQueue() {
                @Override
                public List<HeldDelivery> waitingAfter(long user, long after) {
                    return List.of();
                }

                @Override
                public void take(long user, List<HeldDelivery> preempted) {}
            };
}
