package io.freqcap.schema.history;

import io.freqcap.schema.config.Scope;
import io.freqcap.schema.message.OutboundMessage;
import java.util.Arrays;

/**
 * The counted messages of one user that can still matter (contract.md §6): for each, its timestamp,
 * its channel, a 56-bit fingerprint of its messageId ({@link Fingerprints}), and what scoped and
 * calendar limits read: its category, its campaign and its zone's UTC offset at its timestamp.
 * Entries are kept sorted by timestamp; the decision order is not needed by the rule, only the
 * latest timestamp, which sorting gives.
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
 * <p>This class holds the columns; {@link HistoryQueries} reads them for the rule, {@link
 * HistoryEdits} makes new histories from them, and {@link UserHistorySerializer} writes them.
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

    final long[] timestamps;
    final long[] fingerprints;
    final int[] channelIndex;
    final String[] channels;

    /** Null when no entry has an id. */
    final String[] messageIds;

    /**
     * Categories but {@link OutboundMessage#DEFAULT_CATEGORY} and campaigns, each as a table of the
     * distinct values entries use (in order of first use, as the packed format writes them) and per
     * entry an index: 0 for the default category or no campaign, t + 1 for table[t]. Both null when
     * every entry's is 0. Indexes, so that scope checks compare ints.
     */
    final String[] categoryTable;

    final int[] categoryIndex;
    final String[] campaignTable;
    final int[] campaignIndex;

    /** Per entry, seconds east of UTC; null when every entry's is 0. */
    final int[] offsets;

    /**
     * Per entry, how long after the timestamp it was stamped with it is counted (its send time, a
     * held message, contract.md §6, minus that timestamp); null when every entry's is 0. STALE and
     * pruning read the stamped timestamps ({@link #latestStamped}), the limits the counted ones.
     */
    final long[] heldFor;

    UserHistory(
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

    UserHistory(
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
        return heldFor == null ? latest() : HistoryQueries.latestStamped(this);
    }

    @Override
    public int heldWaiting(long now, int atMost) {
        return HistoryQueries.heldWaiting(this, now, atMost);
    }

    @Override
    public Long firstHeldWaiting(long now) {
        return HistoryQueries.firstHeldWaiting(this, now);
    }

    @Override
    public boolean containsFingerprint(long fingerprint) {
        fingerprint &= Fingerprints.MASK;
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
        return HistoryQueries.count(this, scope, after, upTo);
    }

    @Override
    public long kthLatest(Scope scope, int k) {
        return HistoryQueries.kthLatest(this, scope, k);
    }

    @Override
    public long[] timestampsAfter(Scope scope, long after) {
        return HistoryQueries.timestampsAfter(this, scope, after);
    }

    @Override
    public void forEachIn(Scope scope, long after, long upTo, EntryVisitor v) {
        HistoryQueries.forEachIn(this, scope, after, upTo, v);
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
        return HistoryEdits.with(
                this,
                timestamp,
                fingerprint,
                channel,
                messageId,
                category,
                campaign,
                offsetSeconds,
                heldFor);
    }

    /** This history without the entries at or before {@code cutoff}; channels no longer used go. */
    public UserHistory prunedBefore(long cutoff) {
        return HistoryEdits.prunedBefore(this, cutoff);
    }

    /**
     * This history without the entry counted at {@code timestamp} with this fingerprint (a held
     * message that stops counting, contract.md §5); itself when it has no such entry.
     */
    public UserHistory without(long timestamp, long fingerprint) {
        return HistoryEdits.without(this, timestamp, fingerprint);
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
        return HistoryEdits.of(
                ts, fps, channelIndex, channels, ids, categories, campaigns, offsets, heldFor);
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
        return HistoryQueries.describe(this);
    }
}
