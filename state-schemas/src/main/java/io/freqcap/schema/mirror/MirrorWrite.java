package io.freqcap.schema.mirror;

import java.util.Arrays;

/**
 * One write to the Redis mirror (contract.md §7) for one user: counted messages to add to the
 * user's sorted sets, the channels whose keys the write trims, and the longest window in force.
 *
 * <p>An ALLOWED message gives a write of one entry, whose {@code channels} are every channel the
 * user may have in Redis (so each channel key is trimmed when the user's latest timestamp moves). A
 * {@code rebuild-mirror} gives one write per user with {@code replace} set: the user's keys are
 * replaced by the entries, atomically.
 *
 * @param channels the channels of the keys this write touches; entries point into it
 * @param channelOf for each entry, its channel's index in {@code channels}
 */
public record MirrorWrite(
        long userId,
        long windowMillis,
        boolean replace,
        String[] channels,
        int[] channelOf,
        long[] timestamps,
        String[] messageIds) {

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

    /** A write of one counted message. */
    public static MirrorWrite of(
            long userId,
            long windowMillis,
            String messageId,
            long timestamp,
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
                false,
                Arrays.copyOf(channels, n),
                new int[1],
                new long[] {timestamp},
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
        return o instanceof MirrorWrite w
                && userId == w.userId
                && windowMillis == w.windowMillis
                && replace == w.replace
                && Arrays.equals(channels, w.channels)
                && Arrays.equals(channelOf, w.channelOf)
                && Arrays.equals(timestamps, w.timestamps)
                && Arrays.equals(messageIds, w.messageIds);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(userId) * 31 + Arrays.hashCode(messageIds);
    }

    @Override
    public String toString() {
        return "MirrorWrite[user="
                + userId
                + ", window="
                + windowMillis
                + (replace ? ", replace" : "")
                + ", channels="
                + Arrays.toString(channels)
                + ", ids="
                + Arrays.toString(messageIds)
                + "]";
    }
}
