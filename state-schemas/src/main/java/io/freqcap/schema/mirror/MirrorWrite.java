package io.freqcap.schema.mirror;

import io.freqcap.schema.common.ArrayRecords;
import java.util.Arrays;

/**
 * One write to the Redis mirror (contract.md §7) for one user: counted messages to add to the
 * user's sorted sets (or to remove from them), the channels whose keys the write trims, the longest
 * window in force and the user's latest stamped timestamp, which the trim reads.
 *
 * <p>An ALLOWED message gives a write of one entry (scored at its send time), whose {@code
 * channels} are every channel the user may have in Redis (so each channel key is trimmed when the
 * user's latest stamped timestamp moves). A {@code rebuild-mirror} gives one write per user of
 * {@link Kind#REPLACE}: the user's keys are replaced by the entries, atomically. A held message
 * that stops counting gives a {@link Kind#REMOVE} of its member.
 *
 * <p>The capping task knows what a write changes in Redis, so it says so: a write that trims
 * nothing the user has in Redis carries {@link #NO_TRIM}, and {@code highestScore} tells when the
 * keys may expire without reading them back. Redis is then sent plain commands (contract.md §7,
 * docs/benchmarks.md: the mirror at the cost of a counter).
 *
 * @param latestStamped the user's latest stamped timestamp (contract.md §6) once this write's
 *     messages are counted: members scored before it minus the window are trimmed; {@link #NO_TRIM}
 *     for a write that trims nothing
 * @param channels the channels of the keys this write touches (and trims); entries point into it
 * @param channelOf for each entry, its channel's index in {@code channels}
 * @param highestScore the highest score the user has in Redis once this write is applied (a held
 *     message's send time, or the latest timestamp): its keys expire a window after the later of it
 *     and the write; {@link #UNKNOWN_SCORE} when the write does not know it (a backlog checkpointed
 *     by an earlier version), and then Redis reads it
 */
public record MirrorWrite(
        long userId,
        long windowMillis,
        Kind kind,
        long latestStamped,
        String[] channels,
        int[] channelOf,
        long[] timestamps,
        String[] messageIds,
        long highestScore) {

    /** What a write does with its entries. */
    public enum Kind {
        /** Adds them. */
        ADD,
        /** Replaces the user's keys by them (nothing: deletes the keys). */
        REPLACE,
        /** Removes them (messages that stopped counting). */
        REMOVE
    }

    /** {@code latestStamped} of a write that trims nothing. */
    public static final long NO_TRIM = Long.MIN_VALUE;

    /** {@code highestScore} of a write that does not know the user's highest score. */
    public static final long UNKNOWN_SCORE = Long.MIN_VALUE;

    /** A write that does not know the user's highest score (Redis reads it). */
    public MirrorWrite(
            long userId,
            long windowMillis,
            Kind kind,
            long latestStamped,
            String[] channels,
            int[] channelOf,
            long[] timestamps,
            String[] messageIds) {
        this(
                userId,
                windowMillis,
                kind,
                latestStamped,
                channels,
                channelOf,
                timestamps,
                messageIds,
                UNKNOWN_SCORE);
    }

    /** This write, knowing the user's highest score once it is applied. */
    public MirrorWrite withHighestScore(long score) {
        return new MirrorWrite(
                userId,
                windowMillis,
                kind,
                latestStamped,
                channels,
                channelOf,
                timestamps,
                messageIds,
                score);
    }

    /** Whether this write knows the user's highest score. */
    public boolean knowsHighestScore() {
        return highestScore != UNKNOWN_SCORE;
    }

    /**
     * A write as freqcap 0.3 made them, which trimmed by the latest score: adds (or replaces by)
     * the entries, trimming from the latest of them.
     */
    public MirrorWrite(
            long userId,
            long windowMillis,
            boolean replace,
            String[] channels,
            int[] channelOf,
            long[] timestamps,
            String[] messageIds) {
        this(
                userId,
                windowMillis,
                replace ? Kind.REPLACE : Kind.ADD,
                max(timestamps),
                channels,
                channelOf,
                timestamps,
                messageIds);
    }

    private static long max(long[] a) {
        long m = NO_TRIM;
        for (long x : a) {
            m = Math.max(m, x);
        }
        return m;
    }

    public MirrorWrite {
        if (channelOf.length != timestamps.length || messageIds.length != timestamps.length) {
            throw new IllegalArgumentException("entries of different lengths");
        }
        for (int c : channelOf) {
            if (c < 0 || c >= channels.length) {
                throw new IllegalArgumentException("channel index " + c + " of " + channels.length);
            }
        }
    }

    /** Whether the user's keys are replaced by this write's entries. */
    public boolean replace() {
        return kind == Kind.REPLACE;
    }

    /** A write of one counted message, not held: stamped and scored at its timestamp. */
    public static MirrorWrite of(
            long userId,
            long windowMillis,
            String messageId,
            long timestamp,
            String channel,
            String... otherChannels) {
        return counted(
                userId, windowMillis, timestamp, messageId, timestamp, channel, otherChannels);
    }

    /**
     * A replacing write of nothing: the user's keys and its channels' keys deleted (forget-user).
     */
    public static MirrorWrite erasure(long userId, long windowMillis, String[] channels) {
        return new MirrorWrite(
                userId,
                windowMillis,
                Kind.REPLACE,
                NO_TRIM,
                channels,
                new int[0],
                new long[0],
                new String[0]);
    }

    /**
     * Messages that stopped counting (a held message withdrawn): removed from the user's key and
     * their channels' keys.
     */
    public static MirrorWrite removal(
            long userId, long windowMillis, String[] messageIds, String[] channelOfEach) {
        java.util.List<String> channels = new java.util.ArrayList<>();
        int[] channelOf = new int[messageIds.length];
        for (int i = 0; i < messageIds.length; i++) {
            int c = channels.indexOf(channelOfEach[i]);
            if (c < 0) {
                c = channels.size();
                channels.add(channelOfEach[i]);
            }
            channelOf[i] = c;
        }
        return new MirrorWrite(
                userId,
                windowMillis,
                Kind.REMOVE,
                NO_TRIM,
                channels.toArray(new String[0]),
                channelOf,
                new long[messageIds.length],
                messageIds.clone());
    }

    /**
     * A write of one counted message.
     *
     * @param latestStamped the user's latest stamped timestamp with it counted
     * @param score when it counts: its timestamp, or a held message's send time
     * @param otherChannels the user's other channels, whose keys the write trims
     */
    public static MirrorWrite counted(
            long userId,
            long windowMillis,
            long latestStamped,
            String messageId,
            long score,
            String channel,
            String... otherChannels) {
        String[] channels = new String[otherChannels.length + 1];
        channels[0] = channel;
        int n = 1;
        for (String c : otherChannels) {
            if (!c.equals(channel)) {
                channels[n++] = c;
            }
        }
        return new MirrorWrite(
                userId,
                windowMillis,
                Kind.ADD,
                latestStamped,
                Arrays.copyOf(channels, n),
                new int[1],
                new long[] {score},
                new String[] {messageId});
    }

    /** Counted messages in this write. */
    public int size() {
        return timestamps.length;
    }

    /** {@code <prefix>:{<userId>}}: every counted message of the user. */
    public static String userKey(String prefix, long userId) {
        return prefix + ":{" + userId + "}";
    }

    /** {@code <prefix>:{<userId>}:<channel>}: the same hash tag, so one cluster slot. */
    public static String channelKey(String prefix, long userId, String channel) {
        return userKey(prefix, userId) + ":" + channel;
    }

    @Override
    public boolean equals(Object o) {
        return ArrayRecords.equal(this, o);
    }

    @Override
    public String toString() {
        String removes = kind == Kind.ADD ? "" : ", " + kind.name().toLowerCase();
        return String.format(
                "MirrorWrite[user=%d, window=%d%s, channels=%s, ids=%s]",
                userId,
                windowMillis,
                removes,
                Arrays.toString(channels),
                Arrays.toString(messageIds));
    }

    @Override
    public int hashCode() {
        return ArrayRecords.hash(this);
    }
}
