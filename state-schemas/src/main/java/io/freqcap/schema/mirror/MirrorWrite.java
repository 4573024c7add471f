package io.freqcap.schema.mirror;

import io.freqcap.schema.common.ArrayRecords;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One write of the Redis mirror (contract.md §7, layout 2) for one user: the user's whole log, set
 * with its expiry ({@code SET key log PXAT expireAt}), or the key deleted ({@code DEL}). A write
 * states all Redis should hold of the user, so writes are idempotent and a later one supersedes an
 * earlier one whole.
 *
 * @param log the key's value ({@link MirrorLog}: {@code {"v": 2, "log": [...]}}, UTF-8), or null to
 *     delete the key; a log whose {@code expireAt} the wall clock has passed is deleted instead
 * @param expireAt when the key expires (epoch ms): the log's highest score plus the longest window
 *     in force
 * @param entries counted messages in the log (what the backlog counts; a deletion counts one)
 * @param deletion for a deletion the capping task waits for Redis to confirm ({@code forget-user},
 *     a user whose last counted message stopped counting), its id; 0 otherwise
 * @param legacyChannels channels whose layout-1 keys ({@code <prefix>:{<userId>}:<channel>}) the
 *     deletion removes too: erasures a job of version 5 had not seen confirmed; empty otherwise
 */
public record MirrorWrite(
        long userId,
        byte[] log,
        long expireAt,
        int entries,
        long deletion,
        String[] legacyChannels) {

    private static final String[] NONE = new String[0];

    public MirrorWrite {
        if (entries < 0) {
            throw new IllegalArgumentException("entries " + entries);
        }
        if (log == null && entries != 0) {
            throw new IllegalArgumentException("a deletion has no entries");
        }
        legacyChannels = legacyChannels == null ? NONE : legacyChannels;
    }

    /** The user's log, to be set until {@code expireAt}. */
    public static MirrorWrite log(long userId, byte[] log, long expireAt, int entries) {
        return new MirrorWrite(userId, log, expireAt, entries, 0, NONE);
    }

    /** The user's key deleted (an empty log), {@code deletion} 0 or the id to confirm. */
    public static MirrorWrite deletion(long userId, long deletion, String... legacyChannels) {
        return new MirrorWrite(userId, null, Long.MIN_VALUE, 0, deletion, legacyChannels);
    }

    /** Whether this write deletes the key. */
    public boolean deletes() {
        return log == null;
    }

    /** What this write weighs in the backlog: its entries, a deletion one. */
    public long size() {
        return Math.max(1, entries);
    }

    /** {@code <prefix>:{<userId>}}: the user's key. */
    public static String userKey(String prefix, long userId) {
        return prefix + ":{" + userId + "}";
    }

    /** A layout-1 channel key of version 5 (deleted with an erasure restored from it). */
    public static String legacyChannelKey(String prefix, long userId, String channel) {
        return userKey(prefix, userId) + ":" + channel;
    }

    @Override
    public boolean equals(Object o) {
        return ArrayRecords.equal(this, o);
    }

    @Override
    public int hashCode() {
        return ArrayRecords.hash(this);
    }

    @Override
    public String toString() {
        return "MirrorWrite[user="
                + userId
                + (log == null
                        ? ", delete" + (deletion == 0 ? "" : " #" + deletion)
                        : ", log="
                                + new String(log, StandardCharsets.UTF_8)
                                + ", expireAt="
                                + expireAt)
                + (legacyChannels.length == 0 ? "" : ", legacy=" + Arrays.toString(legacyChannels))
                + "]";
    }
}
