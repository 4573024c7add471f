package io.freqcap.schema.history;

import io.freqcap.schema.message.OutboundMessage;
import java.util.Arrays;

/**
 * How a {@link UserHistory} is made and changed: every edit builds a new history (histories are
 * immutable), keeping entries in timestamp order and the channel, category and campaign tables no
 * larger than the entries use.
 */
final class HistoryEdits {
    private HistoryEdits() {}

    /** {@code h} with one more entry, inserted in timestamp order (after equal timestamps). */
    static UserHistory with(
            UserHistory h,
            long timestamp,
            long fingerprint,
            String channel,
            String messageId,
            String category,
            String campaign,
            int offsetSeconds,
            long heldFor) {
        fingerprint &= Fingerprints.MASK;
        int n = h.timestamps.length;
        int pos = n;
        while (pos > 0 && h.timestamps[pos - 1] > timestamp) {
            pos--;
        }
        int c = Tabled.indexOf(h.channels, channel);
        String[] chs = h.channels;
        if (c < 0) {
            chs = Arrays.copyOf(h.channels, h.channels.length + 1);
            c = h.channels.length;
            chs[c] = channel;
        }
        long[] ts = insert(h.timestamps, pos, timestamp);
        long[] fps = insert(h.fingerprints, pos, fingerprint);
        int[] ci = Tabled.insert(h.channelIndex, pos, c);
        String[] ids = insert(h.messageIds, n, pos, messageId);
        Tabled cats =
                Tabled.with(
                        h.categoryTable,
                        h.categoryIndex,
                        n,
                        pos,
                        OutboundMessage.DEFAULT_CATEGORY.equals(category) ? null : category);
        Tabled camps = Tabled.with(h.campaignTable, h.campaignIndex, n, pos, campaign);
        int[] offs =
                h.offsets == null && offsetSeconds == 0
                        ? null
                        : Tabled.insert(
                                h.offsets == null ? new int[n] : h.offsets, pos, offsetSeconds);
        long[] held =
                h.heldFor == null && heldFor == 0
                        ? null
                        : insert(h.heldFor == null ? new long[n] : h.heldFor, pos, heldFor);
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

    /** {@code h} without the entry counted at {@code timestamp} with this fingerprint. */
    static UserHistory without(UserHistory h, long timestamp, long fingerprint) {
        fingerprint &= Fingerprints.MASK;
        int at = -1;
        for (int i = h.timestamps.length - 1; i >= 0 && at < 0; i--) {
            if (h.timestamps[i] == timestamp && h.fingerprints[i] == fingerprint) {
                at = i;
            }
        }
        if (at < 0) {
            return h;
        }
        int n = h.timestamps.length - 1;
        if (n == 0) {
            return UserHistory.EMPTY;
        }
        long[] ts = new long[n];
        long[] fps = new long[n];
        int[] ci = new int[n];
        String[] ids = h.messageIds == null ? null : new String[n];
        String[] cats = h.categoryIndex == null ? null : new String[n];
        String[] camps = h.campaignIndex == null ? null : new String[n];
        int[] offs = h.offsets == null ? null : new int[n];
        long[] held = h.heldFor == null ? null : new long[n];
        for (int i = 0, j = 0; i <= n; i++) {
            if (i == at) {
                continue;
            }
            ts[j] = h.timestamps[i];
            fps[j] = h.fingerprints[i];
            ci[j] = h.channelIndex[i];
            if (ids != null) {
                ids[j] = h.messageIds[i];
            }
            if (cats != null) {
                cats[j] = h.category(i);
            }
            if (camps != null) {
                camps[j] = h.campaign(i);
            }
            if (offs != null) {
                offs[j] = h.offsets[i];
            }
            if (held != null) {
                held[j] = h.heldFor[i];
            }
            j++;
        }
        return compactChannels(
                ts,
                fps,
                ci,
                h.channels,
                ids,
                Tabled.of(cats, OutboundMessage.DEFAULT_CATEGORY),
                Tabled.of(camps, null),
                offs,
                held);
    }

    /** Entries [from, to) as a history of their own. */
    static UserHistory slice(UserHistory h, int from, int to) {
        return compactChannels(
                Arrays.copyOfRange(h.timestamps, from, to),
                Arrays.copyOfRange(h.fingerprints, from, to),
                Arrays.copyOfRange(h.channelIndex, from, to),
                h.channels,
                h.messageIds == null ? null : Arrays.copyOfRange(h.messageIds, from, to),
                Tabled.slice(h.categoryTable, h.categoryIndex, from, to),
                Tabled.slice(h.campaignTable, h.campaignIndex, from, to),
                h.offsets == null ? null : Arrays.copyOfRange(h.offsets, from, to),
                h.heldFor == null ? null : Arrays.copyOfRange(h.heldFor, from, to));
    }

    /** A history of the given entries: see {@link UserHistory#of}. */
    static UserHistory of(
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
            return UserHistory.EMPTY;
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

    /** A history of per-entry values (categories: null for the default everywhere), as read. */
    static UserHistory fromValues(
            long[] timestamps,
            long[] fingerprints,
            int[] channelIndex,
            String[] channels,
            String[] messageIds,
            String[] categories,
            String[] campaigns,
            int[] offsets,
            long[] heldFor) {
        return new UserHistory(
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

    /** {@code h} without the entries at or before {@code cutoff}. */
    static UserHistory prunedBefore(UserHistory h, long cutoff) {
        int from = 0;
        while (from < h.timestamps.length && h.timestamps[from] <= cutoff) {
            from++;
        }
        if (from == 0) {
            return h;
        }
        if (from == h.timestamps.length) {
            return UserHistory.EMPTY;
        }
        return slice(h, from, h.timestamps.length);
    }
}
