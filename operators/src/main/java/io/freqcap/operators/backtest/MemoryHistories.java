package io.freqcap.operators.backtest;

import io.freqcap.operators.capping.decision.Histories;
import io.freqcap.operators.capping.history.HistoryGrowth;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.HistoryEntry;
import io.freqcap.schema.history.UserHistory;

/** Every user's history in memory: a backtest's, or a test oracle's. */
public final class MemoryHistories implements Histories {
    private final LongMap<CountedHistory> all = new LongMap<>(1 << 16);

    @Override
    public CountedHistory get(long user) {
        CountedHistory h = all.get(user);
        return h == null ? UserHistory.EMPTY : h;
    }

    @Override
    public void count(
            long user, CountedHistory before, HistoryEntry entry, long keptMillis, long now) {
        all.put(user, HistoryGrowth.grown(before, entry, keptMillis, now));
    }

    @Override
    public void uncount(long user, long countedAt, String messageId) {
        CountedHistory h = all.get(user);
        if (h != null) {
            all.put(user, HistoryGrowth.shrunk(h, countedAt, messageId));
        }
    }

    /** Users with a counted message. */
    public int users() {
        return all.size();
    }
}
