package io.freqcap.operators.capping.decision;

import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.message.OutboundMessage;

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
     * @param keepMessageId keep the message's id (the Redis mirror's rebuild needs it)
     */
    void count(
            long user,
            CountedHistory before,
            OutboundMessage m,
            boolean keepMessageId,
            LimitConfig config)
            throws Exception;
}
