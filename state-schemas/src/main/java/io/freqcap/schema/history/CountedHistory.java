package io.freqcap.schema.history;

import io.freqcap.schema.config.Scope;

/**
 * What the decision rule asks of a user's counted messages (contract.md §6), whatever holds them: a
 * short {@link UserHistory} or a long history kept in chunks. Timestamps are in ascending order; a
 * {@link Scope} selects the entries a limit counts (a channel, a category, a campaign, or all).
 */
public interface CountedHistory {
    int size();

    boolean isEmpty();

    /** The latest counted timestamp; only defined for a non-empty history. */
    long latest();

    /**
     * The latest timestamp a counted message was stamped with (contract.md §6: what STALE reads),
     * which is earlier than {@link #latest} when the latest entries are held for a later send time;
     * only defined for a non-empty history.
     */
    long latestStamped();

    /**
     * Held entries (counted later than they were stamped) still waiting at {@code now}: counted
     * after it. Counts at most {@code atMost}.
     */
    int heldWaiting(long now, int atMost);

    /** The earliest send time of a held entry waiting at {@code now}; null when none is. */
    Long firstHeldWaiting(long now);

    /** Receives held entries: the time each is counted at (its send time) and its fingerprint. */
    interface HeldVisitor {
        void visit(long countedAt, long fingerprint);
    }

    /**
     * Hands {@code v} the held entries still waiting at {@code now} (counted after it): where a
     * user's held messages wait in state, without reading them all.
     */
    void forEachHeldWaiting(long now, HeldVisitor v);

    /**
     * Hands {@code v} the held entries still waiting at {@code now}, whole: their channel and
     * category say which a user's opt-out or pause rules out, without reading held state.
     */
    void forEachHeldWaitingEntry(long now, java.util.function.Consumer<HistoryEntry> v);

    /** Whether an entry has this 56-bit fingerprint ({@link Fingerprints#of}). */
    boolean containsFingerprint(long fingerprint);

    /**
     * The latest entry with this 56-bit fingerprint, or null when none has it: what a failed
     * delivery receipt un-counts (contract.md §11).
     */
    HistoryEntry withFingerprint(long fingerprint);

    /** The channels entries of this history use. */
    String[] channels();

    /** Entries in scope with a timestamp in {@code (after, upTo]}. */
    int count(Scope scope, long after, long upTo);

    /**
     * The timestamp of the k-th latest entry in scope (k = 1: the latest); only for 1 <= k <=
     * {@code count(scope, Long.MIN_VALUE, Long.MAX_VALUE)}.
     */
    long kthLatest(Scope scope, int k);

    /** The timestamps in scope later than {@code after}, ascending. */
    long[] timestampsAfter(Scope scope, long after);

    /** Receives entries: their timestamp and their zone's offset from UTC at it. */
    interface EntryVisitor {
        void visit(long timestamp, int offsetSeconds);
    }

    /**
     * Hands {@code v} the entries in scope with a timestamp in {@code (after, upTo]}, ascending.
     */
    void forEachIn(Scope scope, long after, long upTo, EntryVisitor v);

    /** An entry of a campaign, for distinct-campaign limits. */
    interface CampaignVisitor {
        void visit(long timestamp, int offsetSeconds, String campaign);
    }

    /**
     * Hands {@code v} the entries that have a campaign and a timestamp in {@code (after, upTo]},
     * ascending (contract.md §3 {@code campaigns}).
     */
    void forEachCampaign(long after, long upTo, CampaignVisitor v);

    /** Receives counted entries for the Redis mirror's log (contract.md §7). */
    interface LogVisitor {
        /**
         * @param countedAt when it counts: its timestamp, or a held message's send time
         * @param messageId its id, or null for an entry counted while the mirror was off
         */
        void visit(long countedAt, String channel, String messageId);
    }

    /** Hands {@code v} the entries counted at or after {@code from}, ascending. */
    void forEachFrom(long from, LogVisitor v);
}
