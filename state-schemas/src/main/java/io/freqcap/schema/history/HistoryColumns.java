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
            new Parts(new long[0], new long[0], new int[0], new String[0]).columns();

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

    /**
     * What a history's columns are built from: the entries' timestamps, fingerprints and channels,
     * and what only some histories have, each null (or {@link Tabled#NONE}) for none. Filled where
     * the columns are made (the reader, the edits), then {@link #columns} once.
     */
    static final class Parts {
        long[] timestamps;
        long[] fingerprints;
        int[] channelIndex;
        String[] channels;
        String[] messageIds;
        Tabled categories = Tabled.NONE;
        Tabled campaigns = Tabled.NONE;
        int[] offsets;
        long[] heldFor;

        Parts(long[] timestamps, long[] fingerprints, int[] channelIndex, String[] channels) {
            this.timestamps = timestamps;
            this.fingerprints = fingerprints;
            this.channelIndex = channelIndex;
            this.channels = channels;
        }

        /** The parts of {@code h}, to build columns that differ from them in a few. */
        static Parts of(HistoryColumns h) {
            return new Parts(h.timestamps, h.fingerprints, h.channelIndex, h.channels)
                    .ids(h.messageIds)
                    .categories(new Tabled(h.categoryTable, h.categoryIndex))
                    .campaigns(new Tabled(h.campaignTable, h.campaignIndex))
                    .offsets(h.offsets)
                    .heldFor(h.heldFor);
        }

        Parts channels(int[] channelIndex, String[] channels) {
            this.channelIndex = channelIndex;
            this.channels = channels;
            return this;
        }

        Parts ids(String[] messageIds) {
            this.messageIds = messageIds;
            return this;
        }

        Parts categories(Tabled categories) {
            this.categories = categories;
            return this;
        }

        Parts campaigns(Tabled campaigns) {
            this.campaigns = campaigns;
            return this;
        }

        Parts offsets(int[] offsets) {
            this.offsets = offsets;
            return this;
        }

        Parts heldFor(long[] heldFor) {
            this.heldFor = heldFor;
            return this;
        }

        HistoryColumns columns() {
            return new HistoryColumns(this);
        }
    }

    /** Columns of these parts; an optional column whose every entry is the default is null. */
    private HistoryColumns(Parts p) {
        this.timestamps = p.timestamps;
        this.fingerprints = p.fingerprints;
        this.channelIndex = p.channelIndex;
        this.channels = p.channels;
        this.messageIds = p.messageIds;
        boolean noCategory = allZero(p.categories.index());
        this.categoryTable = noCategory ? null : p.categories.table();
        this.categoryIndex = noCategory ? null : p.categories.index();
        boolean noCampaign = allZero(p.campaigns.index());
        this.campaignTable = noCampaign ? null : p.campaigns.table();
        this.campaignIndex = noCampaign ? null : p.campaigns.index();
        this.offsets = allZero(p.offsets) ? null : p.offsets;
        this.heldFor = allZero(p.heldFor) ? null : p.heldFor;
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
