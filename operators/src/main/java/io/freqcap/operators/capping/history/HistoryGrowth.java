package io.freqcap.operators.capping.history;

import io.freqcap.schema.common.Zones;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.Fingerprints;
import io.freqcap.schema.history.HistoryEntry;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.OutboundMessage;

/**
 * How a user's history grows when a message is counted, and what it forgets: the one owner of
 * counting, pruning and the switch between short and long histories. The job's state and the
 * backtest both keep their histories with it, so that they count alike.
 *
 * <p>A history of up to {@link #LONG_AT} entries is a {@link UserHistory} (immutable, one state
 * value); past that it becomes a {@link LongHistory} in buckets of {@link #BUCKET_MILLIS} (changed
 * in place), which turns short again once pruned down to {@link #SHORT_AT}. Entries at or before
 * {@link #pruneCutoff} are dropped as the history is written: no message that is not STALE can need
 * them (a message older than latest − W is STALE, latest the latest stamped timestamp and W the
 * longest window kept, so no interval that matters starts before latest − 2W).
 */
public final class HistoryGrowth {
    /** A history longer than this is kept long, in buckets. */
    public static final int LONG_AT = 128;

    /** A long history pruned down to this is short again. */
    public static final int SHORT_AT = 32;

    /** A long history's bucket span. */
    public static final long BUCKET_MILLIS = 600_000;

    private HistoryGrowth() {}

    /**
     * The history with an ALLOWED message counted (its category, campaign and zone offset kept with
     * it) and what no message can need any more dropped; a {@link LongHistory} is changed in place
     * and returned, unless it turns short.
     *
     * @param countedAt when it counts: its timestamp, or the send time it is held to (the entry
     *     keeps how long after its timestamp that is, for {@link CountedHistory#latestStamped})
     * @param keepMessageId keep the messageId (the Redis mirror's rebuild needs it)
     */
    public static CountedHistory grown(
            CountedHistory before,
            OutboundMessage m,
            long countedAt,
            boolean keepMessageId,
            LimitConfig config) {
        return grown(before, entry(m, countedAt, keepMessageId, config), config);
    }

    /**
     * A message as its user's history keeps it once counted.
     *
     * @param countedAt when it counts: its timestamp, or the send time it is held to
     * @param keepMessageId keep the messageId (the Redis mirror's rebuild needs it)
     */
    public static HistoryEntry entry(
            OutboundMessage m, long countedAt, boolean keepMessageId, LimitConfig config) {
        return new HistoryEntry(
                countedAt,
                Fingerprints.of(m.messageId()),
                m.channel(),
                keepMessageId ? m.messageId() : null,
                m.category(),
                m.campaignId(),
                Zones.offsetSeconds(m.timezone(), config.timezone(), countedAt),
                countedAt - m.timestamp());
    }

    /**
     * The history with {@code entry} counted: see {@link #grown(CountedHistory, OutboundMessage,
     * long, boolean, LimitConfig)}.
     */
    public static CountedHistory grown(
            CountedHistory before, HistoryEntry entry, LimitConfig config) {
        return grown(before, entry, config.keptWindowMillis());
    }

    /**
     * The history with {@code entry} counted, keeping what limits of windows up to {@code
     * keptMillis} can need ({@link #keptMillis}).
     */
    public static CountedHistory grown(CountedHistory before, HistoryEntry entry, long keptMillis) {
        return grown(before, entry, keptMillis, Long.MIN_VALUE);
    }

    /**
     * The same, dropping only what lies twice {@code keptMillis} behind the earlier of the latest
     * stamped timestamp and the wall clock {@code now} ({@link Long#MIN_VALUE}: the former alone).
     * A message stamped far ahead of the clock (within {@code --max-future}) so drops nothing the
     * present can still need: the held messages still waiting (their send time is after {@code
     * now}), which preferences, preemption and {@code maxHeld} find in the history, and the
     * messages a later one would meet again if that one stopped counting (a failed receipt). A
     * replay's clock is the latest timestamp it decided, never before a user's latest stamped one,
     * so it prunes as before.
     */
    public static CountedHistory grown(
            CountedHistory before, HistoryEntry entry, long keptMillis, long now) {
        if (before instanceof LongHistory l) {
            l.add(entry);
            l.pruneThrough(pruneCutoff(present(l.latestStamped(), now), keptMillis));
            return l.size() <= SHORT_AT ? l.toUserHistory() : l;
        }
        UserHistory next = ((UserHistory) before).with(entry);
        next = next.prunedBefore(pruneCutoff(present(next.latestStamped(), now), keptMillis));
        return next.size() <= LONG_AT ? next : LongHistory.of(next, BUCKET_MILLIS);
    }

    /** The earlier of the latest stamped timestamp and the clock, where there is one. */
    private static long present(long latestStamped, long now) {
        return now == Long.MIN_VALUE ? latestStamped : Math.min(latestStamped, now);
    }

    /**
     * Entries at or before this can matter to no message that is not STALE once a message stamped
     * {@code latestStamped} is counted.
     */
    public static long pruneCutoff(long latestStamped, LimitConfig config) {
        return pruneCutoff(latestStamped, config.keptWindowMillis());
    }

    /** The same, for limits of windows up to {@code keptMillis}. */
    public static long pruneCutoff(long latestStamped, long keptMillis) {
        return latestStamped - 2 * keptMillis;
    }

    /**
     * The history without the entry counted at {@code countedAt} with this messageId (a held
     * message that stops counting); a {@link LongHistory} is changed in place and returned.
     */
    public static CountedHistory shrunk(CountedHistory before, long countedAt, String messageId) {
        long fingerprint = Fingerprints.of(messageId);
        if (before instanceof LongHistory l) {
            l.remove(countedAt, fingerprint);
            return l;
        }
        return ((UserHistory) before).without(countedAt, fingerprint);
    }
}
