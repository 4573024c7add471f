package io.freqcap.operators.backtest;

import io.freqcap.operators.capping.decision.HeldQueue;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldKey;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Every user's held messages in memory, for a backtest or a test oracle: numbered in the order
 * held, as the job numbers them. A user's messages whose send time has passed are dropped when it
 * holds another, so memory follows the messages still waiting.
 */
public final class MemoryHeld implements HeldQueue {
    private final LongMap<List<HeldDelivery>> all = new LongMap<>(1 << 10);
    private long decided;

    /** Keeps a message of {@code user} held; drops its messages sent by {@code now}. */
    @Override
    public void hold(long user, HeldDelivery h, long now) {
        List<HeldDelivery> list = all.get(user);
        if (list == null) {
            list = new ArrayList<>(2);
            all.put(user, list);
        }
        list.removeIf(x -> x.delivery().sendAt() <= now);
        list.add(h.decidedAs(++decided));
    }

    @Override
    public List<HeldDelivery> waiting(long user, List<HeldKey> keys) {
        List<HeldDelivery> list = all.get(user);
        List<HeldDelivery> out = new ArrayList<>();
        if (list != null) {
            Set<HeldKey> wanted = new HashSet<>(keys);
            for (HeldDelivery h : list) {
                if (wanted.contains(HeldKey.of(h))) {
                    out.add(h);
                }
            }
        }
        return out;
    }

    @Override
    public void take(long user, List<HeldDelivery> taken) {
        List<HeldDelivery> list = all.get(user);
        if (list != null) {
            list.removeAll(taken);
        }
    }
}
