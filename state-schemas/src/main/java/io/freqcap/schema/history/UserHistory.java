package io.freqcap.schema.history;

import io.freqcap.schema.config.Scope;
import io.freqcap.schema.message.OutboundMessage;
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
 *
 * <p>Why one long class: the compact columns and every query the rule makes of them share one
 * representation; split, each half would expose the arrays.
 */
public final class UserHistory implements CountedHistory, StoredHistory {
    public static final UserHistory EMPTY =
            new UserHistory(
                    new long[0],
                    new long[0],
                    new int[0],
                    new String[0],
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null);

    private final long[] timestamps;
    private final long[] fingerprints;
    private final int[] channelIndex;
    private final String[] channels;

    /** Null when no entry has an id. */
    private final String[] messageIds;

    /**
     * Categories but {@link OutboundMessage#DEFAULT_CATEGORY} and campaigns, each as a table of the
     * distinct values entries use (in order of first use, as the packed format writes them) and per
     * entry an index: 0 for the default category or no campaign, t + 1 for table[t]. Both null when
     * every entry's is 0. Indexes, not a string per entry: a history is read, extended and written
     * for every message, and its scope checks then compare ints.
     */
    private final String[] categoryTable;

    private final int[] categoryIndex;
    private final String[] campaignTable;
    private final int[] campaignIndex;

    /** Per entry, seconds east of UTC; null when every entry's is 0. */
    private final int[] offsets;

    /**
     * Per entry, how long after the timestamp it was stamped with it is counted (its send time, a
     * held message, contract.md §6, minus that timestamp); null when every entry's is 0. STALE and
     * pruning read the stamped timestamps ({@link #latestStamped}), the limits the counted ones.
     */
    private final long[] heldFor;

    /** A history of per-entry values (categories: null for the default everywhere). */
    UserHistory(
            long[] timestamps,
            long[] fingerprints,
            int[] channelIndex,
            String[] channels,
            String[] messageIds,
            String[] categories,
            String[] campaigns,
            int[] offsets,
            long[] heldFor) {
        this(
                timestamps,
                fingerprints,
                channelIndex,
                channels,
                messageIds,
                Tabled.of(categories, OutboundMessage.DEFAULT_CATEGORY),
                Tabled.of(campaigns, null),
                offsets,
                heldFor);
    }

    private UserHistory(
            long[] timestamps,
            long[] fingerprints,
            int[] channelIndex,
            String[] channels,
            String[] messageIds,
            Tabled categories,
            Tabled campaigns,
            int[] offsets,
            long[] heldFor) {
        this(
                timestamps,
                fingerprints,
                channelIndex,
                channels,
                messageIds,
                categories.table(),
                categories.index(),
                campaigns.table(),
                campaigns.index(),
                offsets,
                heldFor);
    }

    private UserHistory(
            long[] timestamps,
            long[] fingerprints,
            int[] channelIndex,
            String[] channels,
            String[] messageIds,
            String[] categoryTable,
            int[] categoryIndex,
            String[] campaignTable,
            int[] campaignIndex,
            int[] offsets,
            long[] heldFor) {
        this.timestamps = timestamps;
        this.fingerprints = fingerprints;
        this.channelIndex = channelIndex;
        this.channels = channels;
        this.messageIds = messageIds;
        boolean noCategory = allZero(categoryIndex);
        this.categoryTable = noCategory ? null : categoryTable;
        this.categoryIndex = noCategory ? null : categoryIndex;
        boolean noCampaign = allZero(campaignIndex);
        this.campaignTable = noCampaign ? null : campaignTable;
        this.campaignIndex = noCampaign ? null : campaignIndex;
        this.offsets = allZero(offsets) ? null : offsets;
        this.heldFor = allZero(heldFor) ? null : heldFor;
    }

    /**
     * A history as the serializer read it: tables of distinct values (no default category), in
     * order of first use, and indexes within them. Tables that break that are rebuilt.
     */
    static UserHistory decoded(
            long[] timestamps,
            long[] fingerprints,
            int[] channelIndex,
            String[] channels,
            String[] messageIds,
            String[] categoryTable,
            int[] categoryIndex,
            String[] campaignTable,
            int[] campaignIndex,
            int[] offsets,
            long[] heldFor) {
        if (!Tabled.canonical(categoryTable, categoryIndex, OutboundMessage.DEFAULT_CATEGORY)
                || !Tabled.canonical(campaignTable, campaignIndex, null)) {
            return new UserHistory(
                    timestamps,
                    fingerprints,
                    channelIndex,
                    channels,
                    messageIds,
                    Tabled.of(
                            Tabled.values(categoryTable, categoryIndex),
                            OutboundMessage.DEFAULT_CATEGORY),
                    Tabled.of(Tabled.values(campaignTable, campaignIndex), null),
                    offsets,
                    heldFor);
        }
        return new UserHistory(
                timestamps,
                fingerprints,
                channelIndex,
                channels,
                messageIds,
                categoryTable,
                categoryIndex,
                campaignTable,
                campaignIndex,
                offsets,
                heldFor);
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

    private static boolean allZero(long[] a) {
        if (a != null) {
            for (long x : a) {
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
        int c = categoryIndex == null ? 0 : categoryIndex[i];
        return c == 0 ? OutboundMessage.DEFAULT_CATEGORY : categoryTable[c - 1];
    }

    /** The campaignId of entry i, or {@code null} for none. */
    public String campaign(int i) {
        int c = campaignIndex == null ? 0 : campaignIndex[i];
        return c == 0 ? null : campaignTable[c - 1];
    }

    /** Seconds east of UTC of entry i's zone at its timestamp. */
    public int offsetSeconds(int i) {
        return offsets == null ? 0 : offsets[i];
    }

    /** How long after its stamped timestamp entry i is counted (0 unless it was held). */
    public long heldFor(int i) {
        return heldFor == null ? 0 : heldFor[i];
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
    public long latestStamped() {
        if (heldFor == null) {
            return latest();
        }
        long latest = Long.MIN_VALUE;
        for (int i = 0; i < timestamps.length; i++) {
            latest = Math.max(latest, timestamps[i] - heldFor[i]);
        }
        return latest;
    }

    @Override
    public int heldWaiting(long now, int atMost) {
        int n = 0;
        for (int i = timestamps.length - 1; heldFor != null && i >= 0 && timestamps[i] > now; i--) {
            if (heldFor[i] > 0 && ++n >= atMost) {
                break;
            }
        }
        return n;
    }

    @Override
    public Long firstHeldWaiting(long now) {
        Long first = null;
        for (int i = timestamps.length - 1; heldFor != null && i >= 0 && timestamps[i] > now; i--) {
            if (heldFor[i] > 0) {
                first = timestamps[i];
            }
        }
        return first;
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

    /** The per-entry indexes {@code scope} reads (null: 0 for every entry). */
    private int[] column(Scope scope) {
        return switch (scope.kind()) {
            case ALL -> null;
            case CHANNEL -> channelIndex;
            case CATEGORY -> categoryIndex;
            case CAMPAIGN -> campaignIndex;
        };
    }

    /** The index the entries of {@code scope} have in its {@link #column}; -1 when none can. */
    private int wanted(Scope scope) {
        return switch (scope.kind()) {
            case ALL -> 0;
            case CHANNEL -> Tabled.indexOf(channels, scope.name());
            case CATEGORY ->
                    OutboundMessage.DEFAULT_CATEGORY.equals(scope.name())
                            ? 0
                            : oneBased(Tabled.indexOf(categoryTable, scope.name()));
            case CAMPAIGN -> oneBased(Tabled.indexOf(campaignTable, scope.name()));
        };
    }

    private static int oneBased(int position) {
        return position < 0 ? -1 : position + 1;
    }

    private static boolean hit(int[] column, int wanted, int i) {
        return column == null ? wanted == 0 : column[i] == wanted;
    }

    @Override
    public int count(Scope scope, long after, long upTo) {
        int[] column = column(scope);
        int wanted = wanted(scope);
        if (wanted < 0 || (column == null && wanted != 0)) {
            return 0;
        }
        int n = 0;
        for (int i = 0; i < timestamps.length; i++) {
            long t = timestamps[i];
            if (t > after && t <= upTo && hit(column, wanted, i)) {
                n++;
            }
        }
        return n;
    }

    @Override
    public long kthLatest(Scope scope, int k) {
        int[] column = column(scope);
        int wanted = wanted(scope);
        for (int i = timestamps.length - 1; i >= 0 && wanted >= 0; i--) {
            if (hit(column, wanted, i) && --k == 0) {
                return timestamps[i];
            }
        }
        throw new IllegalArgumentException("fewer entries in scope than k");
    }

    @Override
    public long[] timestampsAfter(Scope scope, long after) {
        int[] column = column(scope);
        int wanted = wanted(scope);
        long[] out = new long[timestamps.length];
        int n = 0;
        for (int i = 0; i < timestamps.length && wanted >= 0; i++) {
            if (timestamps[i] > after && hit(column, wanted, i)) {
                out[n++] = timestamps[i];
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    @Override
    public void forEachIn(Scope scope, long after, long upTo, EntryVisitor v) {
        int[] column = column(scope);
        int wanted = wanted(scope);
        for (int i = 0; i < timestamps.length && wanted >= 0; i++) {
            long t = timestamps[i];
            if (t > after && t <= upTo && hit(column, wanted, i)) {
                v.visit(t, offsetSeconds(i));
            }
        }
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

    /** This history with one more entry, counted at the timestamp it was stamped with. */
    public UserHistory with(
            long timestamp,
            long fingerprint,
            String channel,
            String messageId,
            String category,
            String campaign,
            int offsetSeconds) {
        return with(
                timestamp, fingerprint, channel, messageId, category, campaign, offsetSeconds, 0);
    }

    /**
     * This history with one more entry, inserted in timestamp order (after equal timestamps).
     *
     * @param timestamp when it counts: its send time
     * @param messageId the id to keep with the entry, or {@code null} to keep none
     * @param campaign the campaignId, or {@code null} for none
     * @param offsetSeconds the entry's zone's offset from UTC at its timestamp
     * @param heldFor its send time minus the timestamp it was stamped with (0: not held)
     */
    public UserHistory with(
            long timestamp,
            long fingerprint,
            String channel,
            String messageId,
            String category,
            String campaign,
            int offsetSeconds,
            long heldFor) {
        fingerprint &= FINGERPRINT_MASK;
        int n = timestamps.length;
        int pos = n;
        while (pos > 0 && timestamps[pos - 1] > timestamp) {
            pos--;
        }
        int c = Tabled.indexOf(channels, channel);
        String[] chs = channels;
        if (c < 0) {
            chs = Arrays.copyOf(channels, channels.length + 1);
            c = channels.length;
            chs[c] = channel;
        }
        long[] ts = insert(timestamps, pos, timestamp);
        long[] fps = insert(fingerprints, pos, fingerprint);
        int[] ci = Tabled.insert(channelIndex, pos, c);
        String[] ids = insert(messageIds, n, pos, messageId);
        Tabled cats =
                Tabled.with(
                        categoryTable,
                        categoryIndex,
                        n,
                        pos,
                        OutboundMessage.DEFAULT_CATEGORY.equals(category) ? null : category);
        Tabled camps = Tabled.with(campaignTable, campaignIndex, n, pos, campaign);
        int[] offs =
                offsets == null && offsetSeconds == 0
                        ? null
                        : Tabled.insert(offsets == null ? new int[n] : offsets, pos, offsetSeconds);
        long[] held =
                this.heldFor == null && heldFor == 0
                        ? null
                        : insert(this.heldFor == null ? new long[n] : this.heldFor, pos, heldFor);
        return new UserHistory(ts, fps, ci, chs, ids, cats, camps, offs, held);
    }

    private static long[] insert(long[] a, int pos, long v) {
        long[] out = new long[a.length + 1];
        System.arraycopy(a, 0, out, 0, pos);
        out[pos] = v;
        System.arraycopy(a, pos, out, pos + 1, a.length - pos);
        return out;
    }

    /** A per-entry array with {@code v} inserted; null while every entry is null. */
    private static String[] insert(String[] a, int n, int pos, String v) {
        if (a == null && v == null) {
            return null;
        }
        String[] out = new String[n + 1];
        if (a != null) {
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

    /**
     * This history without the entry counted at {@code timestamp} with this fingerprint (a held
     * message that stops counting, contract.md §5); itself when it has no such entry.
     */
    public UserHistory without(long timestamp, long fingerprint) {
        fingerprint &= FINGERPRINT_MASK;
        int at = -1;
        for (int i = timestamps.length - 1; i >= 0 && at < 0; i--) {
            if (timestamps[i] == timestamp && fingerprints[i] == fingerprint) {
                at = i;
            }
        }
        if (at < 0) {
            return this;
        }
        int n = timestamps.length - 1;
        if (n == 0) {
            return EMPTY;
        }
        long[] ts = new long[n];
        long[] fps = new long[n];
        int[] ci = new int[n];
        String[] ids = messageIds == null ? null : new String[n];
        String[] cats = categoryIndex == null ? null : new String[n];
        String[] camps = campaignIndex == null ? null : new String[n];
        int[] offs = offsets == null ? null : new int[n];
        long[] held = heldFor == null ? null : new long[n];
        for (int i = 0, j = 0; i <= n; i++) {
            if (i == at) {
                continue;
            }
            ts[j] = timestamps[i];
            fps[j] = fingerprints[i];
            ci[j] = channelIndex[i];
            if (ids != null) {
                ids[j] = messageIds[i];
            }
            if (cats != null) {
                cats[j] = category(i);
            }
            if (camps != null) {
                camps[j] = campaign(i);
            }
            if (offs != null) {
                offs[j] = offsets[i];
            }
            if (held != null) {
                held[j] = heldFor[i];
            }
            j++;
        }
        return compactChannels(
                ts,
                fps,
                ci,
                channels,
                ids,
                Tabled.of(cats, OutboundMessage.DEFAULT_CATEGORY),
                Tabled.of(camps, null),
                offs,
                held);
    }

    /** Entries [from, to) as a history of their own. */
    UserHistory slice(int from, int to) {
        return compactChannels(
                Arrays.copyOfRange(timestamps, from, to),
                Arrays.copyOfRange(fingerprints, from, to),
                Arrays.copyOfRange(channelIndex, from, to),
                channels,
                messageIds == null ? null : Arrays.copyOfRange(messageIds, from, to),
                Tabled.slice(categoryTable, categoryIndex, from, to),
                Tabled.slice(campaignTable, campaignIndex, from, to),
                offsets == null ? null : Arrays.copyOfRange(offsets, from, to),
                heldFor == null ? null : Arrays.copyOfRange(heldFor, from, to));
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
        return of(ts, fps, channelIndex, channels, ids, categories, campaigns, offsets, null);
    }

    /**
     * As {@link #of(long[], long[], int[], String[], String[], String[], String[], int[])}, with
     * held entries.
     *
     * @param heldFor per entry, its send time minus its stamped timestamp; null for 0 everywhere
     */
    public static UserHistory of(
            long[] ts,
            long[] fps,
            int[] channelIndex,
            String[] channels,
            String[] ids,
            String[] categories,
            String[] campaigns,
            int[] offsets,
            long[] heldFor) {
        int n = ts.length;
        if (fps.length != n
                || channelIndex.length != n
                || (ids != null && ids.length != n)
                || (categories != null && categories.length != n)
                || (campaigns != null && campaigns.length != n)
                || (offsets != null && offsets.length != n)
                || (heldFor != null && heldFor.length != n)) {
            throw new IllegalArgumentException("entries of different lengths");
        }
        if (n == 0) {
            return EMPTY;
        }
        return compactChannels(
                ts,
                fps,
                channelIndex,
                channels,
                ids,
                Tabled.of(categories, OutboundMessage.DEFAULT_CATEGORY),
                Tabled.of(campaigns, null),
                offsets,
                heldFor);
    }

    /**
     * Builds a history, dropping channels no entry uses so the table never outgrows the entries.
     */
    private static UserHistory compactChannels(
            long[] ts,
            long[] fps,
            int[] index,
            String[] channels,
            String[] ids,
            Tabled categories,
            Tabled campaigns,
            int[] offsets,
            long[] heldFor) {
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
            return new UserHistory(
                    ts, fps, index, channels, ids, categories, campaigns, offsets, heldFor);
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
        return new UserHistory(ts, fps, ci, chs, ids, categories, campaigns, offsets, heldFor);
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

    /** Categories other than the default, in order of first use; null when there are none. */
    String[] categoryTable() {
        return categoryTable;
    }

    /** Per entry 0 (the default category) or t + 1 for {@link #categoryTable}[t]; or null. */
    int[] categoryIndexArray() {
        return categoryIndex;
    }

    /** Campaigns, in order of first use; null when no entry has one. */
    String[] campaignTable() {
        return campaignTable;
    }

    /** Per entry 0 (no campaign) or t + 1 for {@link #campaignTable}[t]; or null. */
    int[] campaignIndexArray() {
        return campaignIndex;
    }

    int[] offsetArray() {
        return offsets;
    }

    long[] heldForArray() {
        return heldFor;
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
                || !Arrays.equals(offsets, that.offsets)
                || !Arrays.equals(heldFor, that.heldFor)) {
            return false;
        }
        for (int i = 0; i < timestamps.length; i++) {
            if (!channel(i).equals(that.channel(i))
                    || !category(i).equals(that.category(i))
                    || !java.util.Objects.equals(campaign(i), that.campaign(i))) {
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
            if (categoryIndex != null) {
                sb.append('/').append(category(i));
            }
            if (campaign(i) != null) {
                sb.append("/c:").append(campaign(i));
            }
            if (offsets != null) {
                sb.append("/").append(offsets[i]).append('s');
            }
            if (heldFor != null && heldFor[i] != 0) {
                sb.append("/held ").append(heldFor[i]).append("ms");
            }
        }
        return sb.append(']').toString();
    }
}
