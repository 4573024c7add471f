package io.freqcap.operators.capping.decision;

import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.HistoryEntry;

/**
 * Where a {@link DecisionStep} keeps users' histories: the job's keyed state, or a backtest's
 * memory. Both count with {@code HistoryGrowth}, so that a history grows alike in both.
 */
public interface Histories {
    /** The history of {@code user} ({@code UserHistory.EMPTY} for none). */
    CountedHistory get(long user) throws Exception;

    /**
     * Counts an ALLOWED message in the history of {@code user}; {@code before} is what {@link #get}
     * gave (a long history is changed in place).
     *
     * @param keptMillis the longest window the history must serve ({@code
     *     UserPreferences.keptMillis})
     * @param now the job's wall clock, or a replay's ({@link Long#MIN_VALUE}: none): what is
     *     dropped is dropped behind the earlier of it and the latest stamped timestamp ({@code
     *     HistoryGrowth.grown})
     */
    void count(long user, CountedHistory before, HistoryEntry entry, long keptMillis, long now)
            throws Exception;

    /**
     * Un-counts the entry of {@code user} counted at {@code countedAt} with this messageId's
     * fingerprint (a held message that stops counting, contract.md §5); nothing if there is none.
     */
    void uncount(long user, long countedAt, String messageId) throws Exception;
}
