package io.freqcap.operators.backtest;

import io.freqcap.operators.capping.decision.Engagements;

/** Every user's last engagement in memory: a backtest's, or a test oracle's. */
public final class MemoryEngagements implements Engagements {
    private final LongMap<Long> all = new LongMap<>(1 << 10);

    @Override
    public long lastOf(long user) {
        Long at = all.get(user);
        return at == null ? Long.MIN_VALUE : at;
    }

    @Override
    public void engage(long user, long at) {
        if (at > lastOf(user)) {
            all.put(user, at);
        }
    }
}
