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
 * <p>The entries are {@link HistoryColumns}; {@link ColumnQueries} reads them for the rule, {@link
 * ColumnEdits} makes new ones, and {@link UserHistorySerializer} writes them.
 */
public final class UserHistory extends HistoryColumns implements CountedHistory, StoredHistory {
    public static final UserHistory EMPTY = new UserHistory(HistoryColumns.EMPTY);

    UserHistory(HistoryColumns c) {
        super(c);
    }

    @Override
    public void forEachFrom(long from, LogVisitor v) {
        int i = timestamps.length;
        while (i > 0 && timestamps[i - 1] >= from) {
            i--;
        }
        for (; i < timestamps.length; i++) {
            v.visit(timestamps[i], channel(i), messageId(i));
        }
    }

    @Override
    public boolean isEmpty() {
        return timestamps.length == 0;
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
        return heldFor == null ? latest() : ColumnQueries.latestStamped(this);
    }

    @Override
    public int heldWaiting(long now, int atMost) {
        return ColumnQueries.heldWaiting(this, now, atMost);
    }

    @Override
    public Long firstHeldWaiting(long now) {
        return ColumnQueries.firstHeldWaiting(this, now);
    }

    @Override
    public void forEachHeldWaiting(long now, HeldVisitor v) {
        ColumnQueries.forEachHeldWaiting(this, now, v);
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

    @Override
    public void forEachHeldWaitingEntry(long now, java.util.function.Consumer<HistoryEntry> v) {
        for (int i = timestamps.length - 1; heldFor != null && i >= 0 && timestamps[i] > now; i--) {
            if (heldFor[i] > 0) {
                v.accept(entry(i));
            }
        }
    }

    @Override
    public HistoryEntry withFingerprint(long fingerprint) {
        fingerprint &= Fingerprints.MASK;
        for (int i = fingerprints.length - 1; i >= 0; i--) {
            if (fingerprints[i] == fingerprint) {
                return entry(i);
            }
        }
        return null;
    }

    /** Whether entry i counts for {@code scope}. */
    public boolean inScope(int i, Scope scope) {
        return scope.matches(channel(i), category(i), campaign(i));
    }

    @Override
    public int count(Scope scope, long after, long upTo) {
        return ColumnQueries.count(this, scope, after, upTo);
    }

    @Override
    public long kthLatest(Scope scope, int k) {
        return ColumnQueries.kthLatest(this, scope, k);
    }

    @Override
    public long[] timestampsAfter(Scope scope, long after) {
        return ColumnQueries.timestampsAfter(this, scope, after);
    }

    @Override
    public void forEachIn(Scope scope, long after, long upTo, EntryVisitor v) {
        ColumnQueries.forEachIn(this, scope, after, upTo, v);
    }

    @Override
    public void forEachCampaign(long after, long upTo, CampaignVisitor v) {
        for (int i = 0; campaignIndex != null && i < timestamps.length; i++) {
            long t = timestamps[i];
            if (t > after && t <= upTo && campaignIndex[i] != 0) {
                v.visit(t, offsetSeconds(i), campaignTable[campaignIndex[i] - 1]);
            }
        }
    }

    /** This history with one more entry, inserted in timestamp order (after equal timestamps). */
    public UserHistory with(long timestamp, long fingerprint, String channel) {
        return with(HistoryEntry.plain(timestamp, fingerprint, channel, null));
    }

    /**
     * This history with one more entry of the default category, no campaign, in UTC.
     *
     * @param messageId the id to keep with the entry, or {@code null} to keep none
     */
    public UserHistory with(long timestamp, long fingerprint, String channel, String messageId) {
        return with(HistoryEntry.plain(timestamp, fingerprint, channel, messageId));
    }

    /** This history with one more entry, inserted in timestamp order (after equal timestamps). */
    public UserHistory with(HistoryEntry e) {
        long timestamp = e.timestamp();
        long fingerprint = e.fingerprint() & Fingerprints.MASK;
        String channel = e.channel();
        long heldFor = e.heldFor();
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
        long[] ts = ColumnEdits.insert(timestamps, pos, timestamp);
        long[] fps = ColumnEdits.insert(fingerprints, pos, fingerprint);
        int[] ci = Tabled.insert(channelIndex, pos, c);
        String[] ids = ColumnEdits.insert(messageIds, n, pos, e.messageId());
        Tabled cats =
                Tabled.with(
                        categoryTable,
                        categoryIndex,
                        n,
                        pos,
                        OutboundMessage.DEFAULT_CATEGORY.equals(e.category())
                                ? null
                                : e.category());
        Tabled camps = Tabled.with(campaignTable, campaignIndex, n, pos, e.campaign());
        int[] offs =
                offsets == null && e.offsetSeconds() == 0
                        ? null
                        : Tabled.insert(
                                offsets == null ? new int[n] : offsets, pos, e.offsetSeconds());
        long[] held =
                this.heldFor == null && heldFor == 0
                        ? null
                        : ColumnEdits.insert(
                                this.heldFor == null ? new long[n] : this.heldFor, pos, heldFor);
        return new UserHistory(
                new HistoryColumns.Parts(ts, fps, ci, chs)
                        .ids(ids)
                        .categories(cats)
                        .campaigns(camps)
                        .offsets(offs)
                        .heldFor(held)
                        .columns());
    }

    /** This history without the entries at or before {@code cutoff}; channels no longer used go. */
    public UserHistory prunedBefore(long cutoff) {
        return of(ColumnEdits.prunedBefore(this, cutoff));
    }

    /**
     * This history without the entry counted at {@code timestamp} with this fingerprint (a held
     * message that stops counting, contract.md §5); itself when it has no such entry.
     */
    public UserHistory without(long timestamp, long fingerprint) {
        return of(ColumnEdits.without(this, timestamp, fingerprint));
    }

    /**
     * This history without the entries counted at {@code timestamps[i]} with fingerprint {@code
     * fingerprints[i]} (what it would be with those held messages un-counted), in one pass.
     */
    public UserHistory without(long[] timestamps, long[] fingerprints) {
        return of(ColumnEdits.without(this, timestamps, fingerprints));
    }

    /** The history of these columns: this one when they are its own, {@link #EMPTY} for none. */
    private UserHistory of(HistoryColumns columns) {
        if (columns == this) {
            return this;
        }
        return columns.size() == 0 ? EMPTY : new UserHistory(columns);
    }

    /**
     * A history of the given entries (ascending timestamps, fingerprints of 56 bits), to which
     * {@link Entries} adds what only some histories have; channels no entry uses are dropped. The
     * arrays become the history's: the caller must not change them.
     *
     * @param channelIndex per entry, its channel's index in {@code channels}
     */
    public static Entries entries(long[] ts, long[] fps, int[] channelIndex, String[] channels) {
        return new Entries(ts, fps, channelIndex, channels);
    }

    /** The entries of a history being built; each optional column is null for none at all. */
    public static final class Entries {
        private final HistoryColumns.Parts parts;
        private String[] categories;
        private String[] campaigns;

        private Entries(long[] ts, long[] fps, int[] channelIndex, String[] channels) {
            this.parts = new HistoryColumns.Parts(ts, fps, channelIndex, channels);
        }

        /** Per entry its messageId or null. */
        public Entries ids(String[] ids) {
            parts.ids(ids);
            return this;
        }

        /** Per entry its category; null stands for the default category. */
        public Entries categories(String[] categories) {
            this.categories = categories;
            return this;
        }

        /** Per entry its campaignId or null. */
        public Entries campaigns(String[] campaigns) {
            this.campaigns = campaigns;
            return this;
        }

        /** Per entry, seconds east of UTC. */
        public Entries offsets(int[] offsets) {
            parts.offsets(offsets);
            return this;
        }

        /** Per entry, its send time minus its stamped timestamp. */
        public Entries heldFor(long[] heldFor) {
            parts.heldFor(heldFor);
            return this;
        }

        public UserHistory build() {
            int n = parts.timestamps.length;
            if (parts.fingerprints.length != n
                    || parts.channelIndex.length != n
                    || wrongLength(parts.messageIds, n)
                    || wrongLength(categories, n)
                    || wrongLength(campaigns, n)
                    || (parts.offsets != null && parts.offsets.length != n)
                    || (parts.heldFor != null && parts.heldFor.length != n)) {
                throw new IllegalArgumentException("entries of different lengths");
            }
            if (n == 0) {
                return UserHistory.EMPTY;
            }
            return new UserHistory(
                    ColumnEdits.compacted(
                            parts.categories(
                                            Tabled.of(categories, OutboundMessage.DEFAULT_CATEGORY))
                                    .campaigns(Tabled.of(campaigns, null))
                                    .columns()));
        }

        private static boolean wrongLength(Object[] column, int n) {
            return column != null && column.length != n;
        }
    }

    @Override
    public boolean equals(Object o) {
        return this == o
                || (o instanceof UserHistory that && ColumnQueries.sameEntries(this, that));
    }

    @Override
    public int hashCode() {
        return 31 * java.util.Arrays.hashCode(timestamps) + java.util.Arrays.hashCode(fingerprints);
    }

    @Override
    public String toString() {
        return ColumnQueries.describe(this);
    }
}
