package io.freqcap.operators.capping.decision;

import io.freqcap.schema.config.Scope;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.ArrayList;
import java.util.List;

/**
 * What counting a message changes in the Redis mirror (contract.md §7), read from the history the
 * job keeps, so that Redis is sent only what it cannot know: the member, a trim only when the
 * user's keys hold a member scored before the new bound, and the highest score the keys' expiry
 * reads. Plain Java: no Redis, no Flink.
 *
 * <p>Redis holds a subset of the history's entries (every member is a counted message the history
 * had when it was written; pruning drops an entry only once it is below the bound, and then this
 * write, whose history still has it, trims it). So a history with no entry below the bound means
 * keys with no member below it. An empty history proves nothing (a sweep clears histories by event
 * time, keys expire by the wall clock; a job may start without state beside existing keys): the
 * first write of a user the job holds nothing of trims the keys it touches. The check reads every
 * entry below the bound, not only those that crossed it since the user's last write: after a config
 * that shortens the longest window, members the old window kept leave at the user's next write, as
 * they did when every write trimmed.
 */
public final class MirrorChanges {
    private MirrorChanges() {}

    /**
     * The write of an ALLOWED message.
     *
     * @param before the user's history before it is counted (after any preemption's un-count)
     * @param score when it counts: its timestamp, or a held message's send time
     * @param latestStamped the user's latest stamped timestamp once it is counted
     * @param window the longest window in force
     */
    public static MirrorWrite counted(
            CountedHistory before, OutboundMessage m, long score, long latestStamped, long window) {
        return counted(before, before, m, score, latestStamped, window);
    }

    /**
     * The same, after a preemption took held messages out of the history the store holds.
     *
     * @param before the history without them
     * @param order the history whose channels give the order trimmed channels are named in: the one
     *     the store holds once they are out (a long history keeps its order as entries leave it; a
     *     short one is rebuilt in the order of its entries)
     */
    public static MirrorWrite counted(
            CountedHistory before,
            CountedHistory order,
            OutboundMessage m,
            long score,
            long latestStamped,
            long window) {
        String channel = m.channel();
        long trimFrom = NO_MEMBER;
        List<String> trimmed = new ArrayList<>(0);
        if (before.isEmpty()) {
            // A user the job has no history of may still have keys: a history swept by event
            // time while its keys live by the wall clock, a job started without state. Trim
            // what this write touches, as every write did before.
            trimFrom = latestStamped;
        } else {
            long bound = minus(latestStamped, window);
            if (before.count(Scope.ALL, Long.MIN_VALUE, bound - 1) > 0) {
                trimFrom = latestStamped;
                for (String c : order.channels()) {
                    if (!c.equals(channel)
                            && before.count(Scope.channel(c), Long.MIN_VALUE, bound - 1) > 0) {
                        trimmed.add(c);
                    }
                }
            }
        }
        long highest = before.isEmpty() ? score : Math.max(before.latest(), score);
        return MirrorWrite.counted(
                        m.userId(),
                        window,
                        trimFrom == NO_MEMBER ? MirrorWrite.NO_TRIM : trimFrom,
                        m.messageId(),
                        score,
                        channel,
                        trimmed.toArray(new String[0]))
                .withHighestScore(highest);
    }

    /**
     * The Redis mirror's removal of held messages of {@code user} that stop counting (preempted,
     * cancelled): their members, from their channels' keys.
     */
    public static MirrorWrite withdrawn(long user, long window, List<HeldDelivery> held) {
        String[] ids = new String[held.size()];
        String[] channels = new String[held.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = held.get(i).messageId();
            channels[i] = held.get(i).channel();
        }
        return MirrorWrite.removal(user, window, ids, channels);
    }

    private static final long NO_MEMBER = Long.MIN_VALUE;

    /** {@code a - b}, saturating at {@link Long#MIN_VALUE} + 1 (so {@code - 1} stays in range). */
    private static long minus(long a, long b) {
        long d = a - b;
        return ((a ^ b) & (a ^ d)) < 0 || d == Long.MIN_VALUE ? Long.MIN_VALUE + 1 : d;
    }
}
