package io.freqcap.schema.history;

import io.freqcap.schema.message.OutboundMessage;

/**
 * The columns a {@link UserHistory} is made of: per entry its timestamp, fingerprint and channel
 * index, and, each null until an entry has one other than the default, its messageId, category
 * index, campaign index, UTC offset and how long it was held. Immutable by convention: the arrays
 * are never changed once built ({@link ColumnEdits} builds new ones).
 */
class HistoryColumns {
    static final HistoryColumns EMPTY =
            new HistoryColumns(
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

    HistoryColumns(
            long[] timestamps,
            long[] fingerprints,
            int[] channelIndex,
            Tabled categories,
            Tabled campaigns,
            String[] channels,
            String[] messageIds,
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

    HistoryColumns(
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

    /** The same columns, for a subclass: no array is copied. */
    HistoryColumns(HistoryColumns c) {
        this.timestamps = c.timestamps;
        this.fingerprints = c.fingerprints;
        this.channelIndex = c.channelIndex;
        this.channels = c.channels;
        this.messageIds = c.messageIds;
        this.categoryTable = c.categoryTable;
        this.categoryIndex = c.categoryIndex;
        this.campaignTable = c.campaignTable;
        this.campaignIndex = c.campaignIndex;
        this.offsets = c.offsets;
        this.heldFor = c.heldFor;
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
        long any = 0;
        for (int i = 0; a != null && i < a.length; i++) {
            any |= a[i];
        }
        return any == 0;
    }

    public int size() {
        return timestamps.length;
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

    /** Entry i as a whole. */
    public HistoryEntry entry(int i) {
        return new HistoryEntry(
                timestamps[i],
                fingerprints[i],
                channel(i),
                messageId(i),
                category(i),
                campaign(i),
                offsetSeconds(i),
                heldFor(i));
    }
}
