package io.freqcap.schema;

import java.util.Arrays;

/**
 * The counted messages of one user that can still matter (contract.md §6): for each, its timestamp,
 * its channel and a 64-bit fingerprint of its messageId. Entries are kept sorted by timestamp; the
 * decision order is not needed by the rule, only the latest timestamp, which sorting gives.
 *
 * <p>Immutable: {@link #with} and {@link #prunedBefore} return new instances, so a history read
 * from state can be shared and a serializer never sees it change.
 *
 * <p>Why a fingerprint and not the messageId: the id is up to 128 characters and only equality is
 * ever asked of it (DUPLICATE). A 56-bit fingerprint keeps a user's state small: a new message is
 * falsely taken for a duplicate with probability (entries kept) / 2^56, about 7e-17 for a typical
 * history of five; at 200,000 messages/s that is one false DUPLICATE in about 2,000 years (in about
 * 10 years if every user kept a thousand entries).
 *
 * <p>With the Redis mirror on, the messageIds themselves are kept too ({@link #messageId}): a
 * {@code rebuild-mirror} must write the very members Redis lost. Entries counted while the mirror
 * was off have none ({@code null}).
 */
public final class UserHistory implements CountedHistory {
    public static final UserHistory EMPTY =
            new UserHistory(new long[0], new long[0], new int[0], new String[0], null);

    private final long[] timestamps;
    private final long[] fingerprints;
    private final int[] channelIndex;
    private final String[] channels;

    /** Null when no entry has an id. */
    private final String[] messageIds;

    UserHistory(
            long[] timestamps,
            long[] fingerprints,
            int[] channelIndex,
            String[] channels,
            String[] messageIds) {
        this.timestamps = timestamps;
        this.fingerprints = fingerprints;
        this.channelIndex = channelIndex;
        this.channels = channels;
        this.messageIds = messageIds;
    }

    @Override
    public int size() {
        return timestamps.length;
    }

    @Override
    public boolean isEmpty() {
        return timestamps.length == 0;
    }

    public long timestamp(int i) {
        return timestamps[i];
    }

    public long fingerprint(int i) {
        return fingerprints[i];
    }

    public String channel(int i) {
        return channels[channelIndex[i]];
    }

    /** The messageId of entry i, or {@code null} when it was counted without keeping ids. */
    public String messageId(int i) {
        return messageIds == null ? null : messageIds[i];
    }

    @Override
    public String[] channels() {
        return channels.clone();
    }

    @Override
    public long latest() {
        return timestamps[timestamps.length - 1];
    }

    @Override
    public boolean containsFingerprint(long fingerprint) {
        fingerprint &= FINGERPRINT_MASK;
        for (long f : fingerprints) {
            if (f == fingerprint) {
                return true;
            }
        }
        return false;
    }

    /**
     * Copies the timestamps of the entries in one scope into {@code out}, in ascending order.
     *
     * @param channel a channel name, or {@code null} for every entry
     * @return how many were copied
     */
    public int timestampsIn(String channel, long[] out) {
        if (channel == null) {
            System.arraycopy(timestamps, 0, out, 0, timestamps.length);
            return timestamps.length;
        }
        int c = indexOfChannel(channel);
        if (c < 0) {
            return 0;
        }
        int n = 0;
        for (int i = 0; i < timestamps.length; i++) {
            if (channelIndex[i] == c) {
                out[n++] = timestamps[i];
            }
        }
        return n;
    }

    /** The channel's index in the table, -1 for every entry ({@code null}), -2 for none. */
    private int scope(String channel) {
        if (channel == null) {
            return -1;
        }
        int c = indexOfChannel(channel);
        return c < 0 ? -2 : c;
    }

    @Override
    public int count(String channel, long after, long upTo) {
        int c = scope(channel);
        int n = 0;
        for (int i = 0; i < timestamps.length && c != -2; i++) {
            long t = timestamps[i];
            if (t > after && t <= upTo && (c < 0 || channelIndex[i] == c)) {
                n++;
            }
        }
        return n;
    }

    @Override
    public long kthLatest(String channel, int k) {
        int c = scope(channel);
        for (int i = timestamps.length - 1; i >= 0 && c != -2; i--) {
            if ((c < 0 || channelIndex[i] == c) && --k == 0) {
                return timestamps[i];
            }
        }
        throw new IllegalArgumentException("fewer entries in scope than k");
    }

    @Override
    public long[] timestampsAfter(String channel, long after) {
        int c = scope(channel);
        long[] out = new long[timestamps.length];
        int n = 0;
        for (int i = 0; i < timestamps.length && c != -2; i++) {
            if (timestamps[i] > after && (c < 0 || channelIndex[i] == c)) {
                out[n++] = timestamps[i];
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    private int indexOfChannel(String channel) {
        for (int i = 0; i < channels.length; i++) {
            if (channels[i].equals(channel)) {
                return i;
            }
        }
        return -1;
    }

    /** This history with one more entry, inserted in timestamp order (after equal timestamps). */
    public UserHistory with(long timestamp, long fingerprint, String channel) {
        return with(timestamp, fingerprint, channel, null);
    }

    /**
     * This history with one more entry, inserted in timestamp order (after equal timestamps).
     *
     * @param messageId the id to keep with the entry, or {@code null} to keep none
     */
    public UserHistory with(long timestamp, long fingerprint, String channel, String messageId) {
        fingerprint &= FINGERPRINT_MASK;
        int n = timestamps.length;
        int pos = n;
        while (pos > 0 && timestamps[pos - 1] > timestamp) {
            pos--;
        }
        int c = indexOfChannel(channel);
        String[] chs = channels;
        if (c < 0) {
            chs = Arrays.copyOf(channels, channels.length + 1);
            c = channels.length;
            chs[c] = channel;
        }
        long[] ts = new long[n + 1];
        long[] fps = new long[n + 1];
        int[] ci = new int[n + 1];
        System.arraycopy(timestamps, 0, ts, 0, pos);
        System.arraycopy(fingerprints, 0, fps, 0, pos);
        System.arraycopy(channelIndex, 0, ci, 0, pos);
        ts[pos] = timestamp;
        fps[pos] = fingerprint;
        ci[pos] = c;
        System.arraycopy(timestamps, pos, ts, pos + 1, n - pos);
        System.arraycopy(fingerprints, pos, fps, pos + 1, n - pos);
        System.arraycopy(channelIndex, pos, ci, pos + 1, n - pos);
        String[] ids = null;
        if (messageIds != null || messageId != null) {
            ids = new String[n + 1];
            if (messageIds != null) {
                System.arraycopy(messageIds, 0, ids, 0, pos);
                System.arraycopy(messageIds, pos, ids, pos + 1, n - pos);
            }
            ids[pos] = messageId;
        }
        return new UserHistory(ts, fps, ci, chs, ids);
    }

    /** This history without the entries at or before {@code cutoff}; channels no longer used go. */
    public UserHistory prunedBefore(long cutoff) {
        int from = 0;
        while (from < timestamps.length && timestamps[from] <= cutoff) {
            from++;
        }
        if (from == 0) {
            return this;
        }
        if (from == timestamps.length) {
            return EMPTY;
        }
        long[] ts = Arrays.copyOfRange(timestamps, from, timestamps.length);
        long[] fps = Arrays.copyOfRange(fingerprints, from, fingerprints.length);
        int[] oldIndex = Arrays.copyOfRange(channelIndex, from, channelIndex.length);
        String[] ids =
                messageIds == null ? null : Arrays.copyOfRange(messageIds, from, messageIds.length);
        return compactChannels(ts, fps, oldIndex, channels, ids);
    }

    /**
     * A history of the given entries (ascending timestamps, fingerprints of 56 bits); channels no
     * entry uses are dropped. The arrays become the history's: the caller must not change them.
     *
     * @param channelIndex per entry, its channel's index in {@code channels}
     * @param ids per entry its messageId or null; null for none at all
     */
    public static UserHistory of(
            long[] ts, long[] fps, int[] channelIndex, String[] channels, String[] ids) {
        if (fps.length != ts.length
                || channelIndex.length != ts.length
                || (ids != null && ids.length != ts.length)) {
            throw new IllegalArgumentException("entries of different lengths");
        }
        if (ts.length == 0) {
            return EMPTY;
        }
        return compactChannels(ts, fps, channelIndex, channels, ids);
    }

    /**
     * Builds a history, dropping channels no entry uses so the table never outgrows the entries.
     */
    static UserHistory compactChannels(
            long[] ts, long[] fps, int[] index, String[] channels, String[] ids) {
        int[] remap = new int[channels.length];
        Arrays.fill(remap, -1);
        int used = 0;
        for (int c : index) {
            if (remap[c] < 0) {
                remap[c] = used++;
            }
        }
        if (used == channels.length) {
            boolean identity = true;
            for (int i = 0; i < remap.length; i++) {
                identity &= remap[i] == i;
            }
            if (identity) {
                return new UserHistory(ts, fps, index, channels, ids);
            }
        }
        String[] chs = new String[used];
        for (int i = 0; i < channels.length; i++) {
            if (remap[i] >= 0) {
                chs[remap[i]] = channels[i];
            }
        }
        int[] ci = new int[index.length];
        for (int i = 0; i < index.length; i++) {
            ci[i] = remap[index[i]];
        }
        return new UserHistory(ts, fps, ci, chs, ids);
    }

    int[] channelIndexArray() {
        return channelIndex;
    }

    String[] channelArray() {
        return channels;
    }

    long[] timestampArray() {
        return timestamps;
    }

    long[] fingerprintArray() {
        return fingerprints;
    }

    String[] messageIdArray() {
        return messageIds;
    }

    /** Fingerprints keep 56 bits: seven bytes in state. */
    public static final long FINGERPRINT_MASK = (1L << 56) - 1;

    /** A 56-bit fingerprint of a messageId: FNV-1a over its chars, a full avalanche, 56 bits. */
    public static long fingerprint(String messageId) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < messageId.length(); i++) {
            h ^= messageId.charAt(i);
            h *= 0x100000001b3L;
        }
        h ^= messageId.length();
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h & FINGERPRINT_MASK;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof UserHistory)) {
            return false;
        }
        UserHistory that = (UserHistory) o;
        if (!Arrays.equals(timestamps, that.timestamps)
                || !Arrays.equals(fingerprints, that.fingerprints)
                || !Arrays.equals(messageIds, that.messageIds)) {
            return false;
        }
        for (int i = 0; i < timestamps.length; i++) {
            if (!channel(i).equals(that.channel(i))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(timestamps) + Arrays.hashCode(fingerprints);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("UserHistory[");
        for (int i = 0; i < timestamps.length; i++) {
            sb.append(i == 0 ? "" : ", ").append(timestamps[i]).append('/').append(channel(i));
        }
        return sb.append(']').toString();
    }
}
