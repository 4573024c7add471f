package io.freqcap.operators.capping.decision;

import io.freqcap.schema.preference.UserPreferences;

/**
 * Where a {@link DecisionStep} finds a user's preferences (contract.md §10): the job's keyed state,
 * or a backtest's memory ({@code freqcap-simulate --preferences}).
 */
public interface Preferences {
    /** The preferences of {@code user} (in the job: the current key), or null for none. */
    UserPreferences of(long user) throws Exception;

    /** No user has preferences (a job without {@code --preferences-topic}). */
    Preferences NONE = user -> null;
}
