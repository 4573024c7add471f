package io.freqcap.operators.backtest;

import io.freqcap.operators.capping.decision.Lifetimes;
import io.freqcap.schema.lifetime.LifetimeCount;
import java.util.HashMap;
import java.util.Map;

/**
 * Every user's lifetime counts in memory (contract.md §3): a backtest's, which counts from its
 * first record when its config has a lifetime limit, as the job counts from the moment one is in
 * force.
 */
public final class MemoryLifetimes implements Lifetimes {
    private final LongMap<Map<String, LifetimeCount>> all = new LongMap<>(1 << 10);
    private final long retentionMillis;
    private final boolean counting;

    /**
     * @param counting whether to count (the config has a lifetime limit)
     */
    public MemoryLifetimes(long retentionMillis, boolean counting) {
        this.retentionMillis = retentionMillis;
        this.counting = counting;
    }

    @Override
    public long countAt(long user, String campaign, long t) {
        Map<String, LifetimeCount> counts = all.get(user);
        LifetimeCount c = counts == null ? null : counts.get(campaign);
        return c == null ? 0 : c.at(t, retentionMillis);
    }

    @Override
    public void count(long user, String campaign, long t, long sendAt) {
        if (!counting) {
            return;
        }
        Map<String, LifetimeCount> counts = all.get(user);
        if (counts == null) {
            counts = new HashMap<>(4);
            all.put(user, counts);
        }
        counts.put(
                campaign, LifetimeCount.counted(counts.get(campaign), t, sendAt, retentionMillis));
    }

    @Override
    public void uncount(long user, String campaign) {
        Map<String, LifetimeCount> counts = all.get(user);
        LifetimeCount c = counts == null ? null : counts.get(campaign);
        if (c != null) {
            counts.put(campaign, c.uncounted());
        }
    }
}
