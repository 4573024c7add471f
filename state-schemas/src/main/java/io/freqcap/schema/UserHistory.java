package io.freqcap.schema;

import java.util.Arrays;

/**
 * The counted messages of one user that can still matter (contract.md §6): for each, its timestamp,
 * its channel, a 64-bit fingerprint of its messageId, and what scoped and calendar limits read: its
 * category, its campaign and its zone's UTC offset at its timestamp. Entries are kept sorted by
 * timestamp; the decision order is not needed by the rule, only the latest timestamp, which sorting
 * gives.
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
 * was off have none ({@code null}). A user pays for categories, campaigns and offsets only when an
 * entry has one other than the default ({@code marketing}, none, UTC): each is a per-entry array
 * that is null otherwise.
 */
public final class UserHistory implements CountedHistory {
    public static final UserHistory EMPTY =
            new UserHistory(
                    new long[0], new long[0], new int[0], new String[0], null, null, null, null);

    private final long[] timestamps;
    private final long[] fingerprints;
    private final int[] channelIndex;
    private final String[] channels;

    /** Null when no entry has an id. */
    private final String[] messageIds;

    /** Per entry; null when every entry is {@link OutboundMessage#DEFAULT_CATEGORY}. */
    private final String[] categories;

    /** Per entry, null for none; null when no entry has a campaign. */
    private final String[] campaigns;

    /** Per entry, seconds east of UTC; null when every entry's is 0. */
    private final int[] offsets;

    UserHistory(
            long[] timestamps,
            long[] fingerprints,
            int[] channelIndex,
            String[] channels,
            String[] messageIds,
            String[] categories,
            String[] campaigns,
            int[] offsets) {
        this.timestamps = timestamps;
        this.fingerprints = fingerprints;
        this.channelIndex = channelIndex;
        this.channels = channels;
        this.messageIds = messageIds;
        this.categories = allDefault(categories) ? null : categories;
        this.campaigns = allNull(campaigns) ? null : campaigns;
        this.offsets = allZero(offsets) ? null : offsets;
    }

    private static boolean allDefault(String[] a) {
        if (a != null) {
            for (String s : a) {
                if (!OutboundMessage.DEFAULT_CATEGORY.equals(s)) {
                    return false;
                }
            }
        }
        return true;
    }

    private static boolean allNull(String[] a) {
        if (a != null) {
            for (String s : a) {
                if (s != null) {
                    return false;
                }
            }
        }
        return true;
    }

    private static boolean allZero(int[] a) {
        if (a != null) {
            for (int x : a) {
                if (x != 0) {
                    return false;
                }
            }
        }
        return true;
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

    public String category(int i) {
        return categories == null ? OutboundMessage.DEFAULT_CATEGORY : categories[i];
    }

    /** The campaignId of entry i, or {@code null} for none. */
    public String campaign(int i) {
        return campaigns == null ? null : campaigns[i];
    }

    /** Seconds east of UTC of entry i's zone at its timestamp. */
    public int offsetSeconds(int i) {
        return offsets == null ? 0 : offsets[i];
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

    /** Whether entry i counts for {@code scope}. */
    public boolean inScope(int i, Scope scope) {
        return switch (scope.kind()) {
            case ALL -> true;
            case CHANNEL -> channel(i).equals(scope.name());
            case CATEGORY -> category(i).equals(scope.name());
            case CAMPAIGN -> scope.name().equals(campaign(i));
        };
    }

    @Override
    public int count(Scope scope, long after, long upTo) {
        int n = 0;
        for (int i = 0; i < timestamps.length; i++) {
            long t = timestamps[i];
            if (t > after && t <= upTo && inScope(i, scope)) {
                n++;
            }
        }
        return n;
    }

    @Override
    public long kthLatest(Scope scope, int k) {
        for (int i = timestamps.length - 1; i >= 0; i--) {
            if (inScope(i, scope) && --k == 0) {
                return timestamps[i];
            }
        }
        throw new IllegalArgumentException("fewer entries in scope than k");
    }

    @Override
    public long[] timestampsAfter(Scope scope, long after) {
        long[] out = new long[timestamps.length];
        int n = 0;
        for (int i = 0; i < timestamps.length; i++) {
            if (timestamps[i] > after && inScope(i, scope)) {
                out[n++] = timestamps[i];
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    @Override
    public void forEachIn(Scope scope, long after, long upTo, EntryVisitor v) {
        for (int i = 0; i < timestamps.length; i++) {
            long t = timestamps[i];
            if (t > after && t <= upTo && inScope(i, scope)) {
                v.visit(t, offsetSeconds(i));
            }
        }
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
     * This history with one more entry of the default category, no campaign, in UTC.
     *
     * @param messageId the id to keep with the entry, or {@code null} to keep none
     */
    public UserHistory with(long timestamp, long fingerprint, String channel, String messageId) {
        return with(
                timestamp,
                fingerprint,
                channel,
                messageId,
                OutboundMessage.DEFAULT_CATEGORY,
                null,
                0);
    }

    /**
     * This history with one more entry, inserted in timestamp order (after equal timestamps).
     *
     * @param messageId the id to keep with the entry, or {@code null} to keep none
     * @param campaign the campaignId, or {@code null} for none
     * @param offsetSeconds the entry's zone's offset from UTC at its timestamp
     */
    public UserHistory with(
            long timestamp,
            long fingerprint,
            String channel,
            String messageId,
            String category,
            String campaign,
            int offsetSeconds) {
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
        long[] ts = insert(timestamps, pos, timestamp);
        long[] fps = insert(fingerprints, pos, fingerprint);
        int[] ci = insert(channelIndex, pos, c);
        String[] ids = insert(messageIds, n, pos, messageId, null);
        String[] cats = insert(categories, n, pos, category, OutboundMessage.DEFAULT_CATEGORY);
        String[] camps = insert(campaigns, n, pos, campaign, null);
        int[] offs =
                offsets == null && offsetSeconds == 0
                        ? null
                        : insert(offsetArrayOf(n), pos, offsetSeconds);
        return new UserHistory(ts, fps, ci, chs, ids, cats, camps, offs);
    }

    private int[] offsetArrayOf(int n) {
        return offsets == null ? new int[n] : offsets;
    }

    private static long[] insert(long[] a, int pos, long v) {
        long[] out = new long[a.length + 1];
        System.arraycopy(a, 0, out, 0, pos);
        out[pos] = v;
        System.arraycopy(a, pos, out, pos + 1, a.length - pos);
        return out;
    }

    private static int[] insert(int[] a, int pos, int v) {
        int[] out = new int[a.length + 1];
        System.arraycopy(a, 0, out, 0, pos);
        out[pos] = v;
        System.arraycopy(a, pos, out, pos + 1, a.length - pos);
        return out;
    }

    /** A per-entry array with {@code v} inserted; null while every entry is {@code absent}. */
    private static String[] insert(String[] a, int n, int pos, String v, String absent) {
        if (a == null && java.util.Objects.equals(v, absent)) {
            return null;
        }
        String[] out = new String[n + 1];
        if (a == null) {
            Arrays.fill(out, absent);
        } else {
            System.arraycopy(a, 0, out, 0, pos);
            System.arraycopy(a, pos, out, pos + 1, n - pos);
        }
        out[pos] = v;
        return out;
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
        return slice(from, timestamps.length);
    }

    /** Entries [from, to) as a history of their own. */
    UserHistory slice(int from, int to) {
        return compactChannels(
                Arrays.copyOfRange(timestamps, from, to),
                Arrays.copyOfRange(fingerprints, from, to),
                Arrays.copyOfRange(channelIndex, from, to),
                channels,
                messageIds == null ? null : Arrays.copyOfRange(messageIds, from, to),
                categories == null ? null : Arrays.copyOfRange(categories, from, to),
                campaigns == null ? null : Arrays.copyOfRange(campaigns, from, to),
                offsets == null ? null : Arrays.copyOfRange(offsets, from, to));
    }

    /**
     * A history of the given entries (ascending timestamps, fingerprints of 56 bits); channels no
     * entry uses are dropped. The arrays become the history's: the caller must not change them.
     *
     * @param channelIndex per entry, its channel's index in {@code channels}
     * @param ids per entry its messageId or null; null for none at all
     * @param categories per entry; null for the default category everywhere
     * @param campaigns per entry its campaignId or null; null for none at all
     * @param offsets per entry, seconds east of UTC; null for 0 everywhere
     */
    public static UserHistory of(
            long[] ts,
            long[] fps,
            int[] channelIndex,
            String[] channels,
            String[] ids,
            String[] categories,
            String[] campaigns,
            int[] offsets) {
        int n = ts.length;
        if (fps.length != n
                || channelIndex.length != n
                || (ids != null && ids.length != n)
                || (categories != null && categories.length != n)
                || (campaigns != null && campaigns.length != n)
                || (offsets != null && offsets.length != n)) {
            throw new IllegalArgumentException("entries of different lengths");
        }
        if (n == 0) {
            return EMPTY;
        }
        return compactChannels(
                ts, fps, channelIndex, channels, ids, categories, campaigns, offsets);
    }

    /**
     * Builds a history, dropping channels no entry uses so the table never outgrows the entries.
     */
    static UserHistory compactChannels(
            long[] ts,
            long[] fps,
            int[] index,
            String[] channels,
            String[] ids,
            String[] categories,
            String[] campaigns,
            int[] offsets) {
        int[] remap = new int[channels.length];
        Arrays.fill(remap, -1);
        int used = 0;
        for (int c : index) {
            if (remap[c] < 0) {
                remap[c] = used++;
            }
        }
        boolean identity = used == channels.length;
        for (int i = 0; i < remap.length && identity; i++) {
            identity = remap[i] == i;
        }
        if (identity) {
            return new UserHistory(ts, fps, index, channels, ids, categories, campaigns, offsets);
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
        return new UserHistory(ts, fps, ci, chs, ids, categories, campaigns, offsets);
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

    String[] categoryArray() {
        return categories;
    }

    String[] campaignArray() {
        return campaigns;
    }

    int[] offsetArray() {
        return offsets;
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
        if (!(o instanceof UserHistory that)) {
            return false;
        }
        if (!Arrays.equals(timestamps, that.timestamps)
                || !Arrays.equals(fingerprints, that.fingerprints)
                || !Arrays.equals(messageIds, that.messageIds)
                || !Arrays.equals(categories, that.categories)
                || !Arrays.equals(campaigns, that.campaigns)
                || !Arrays.equals(offsets, that.offsets)) {
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
            if (categories != null) {
                sb.append('/').append(category(i));
            }
            if (campaign(i) != null) {
                sb.append("/c:").append(campaign(i));
            }
            if (offsets != null) {
                sb.append("/").append(offsets[i]).append('s');
            }
        }
        return sb.append(']').toString();
    }
}
