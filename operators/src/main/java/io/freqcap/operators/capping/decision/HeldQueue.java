package io.freqcap.operators.capping.decision;

import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldKey;
import java.util.List;

/**
 * Where a {@link DecisionStep} finds a user's held messages when a message may take the place of
 * one (contract.md §6, "Preemption"); and where {@link Stores} holds messages and gives up the ones
 * a message takes: the job's keyed state, or a backtest's memory.
 */
public interface HeldQueue {
    /**
     * The held messages of {@code user} (in the job: the current key) under these keys (send time
     * and fingerprint, as its history counts them), in any order; a key with none is skipped.
     */
    List<HeldDelivery> waiting(long user, List<HeldKey> keys) throws Exception;

    /** Takes these held messages of {@code user} out: they will not be delivered. */
    void take(long user, List<HeldDelivery> preempted) throws Exception;

    /**
     * Keeps a message of {@code user} held until its send time, numbered after every one held
     * before it.
     *
     * @param now the clock it was decided at (a backtest drops what it has sent by then)
     */
    void hold(long user, HeldDelivery h, long now) throws Exception;

    /** No held messages at all (a caller that holds none, as some test oracles). */
    HeldQueue NONE =
            new HeldQueue() {
                @Override
                public List<HeldDelivery> waiting(long user, List<HeldKey> keys) {
                    return List.of();
                }

                @Override
                public void take(long user, List<HeldDelivery> preempted) {}

                @Override
                public void hold(long user, HeldDelivery h, long now) {}
            };
}
