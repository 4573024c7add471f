package io.freqcap.schema.history;

import io.freqcap.schema.history.HistoryColumns.Parts;
import io.freqcap.schema.message.OutboundMessage;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How {@link HistoryColumns} are made and changed: every edit builds new columns (histories are
 * immutable), keeping entries in timestamp order and the channel, category and campaign tables no
 * larger than the entries use.
 */
final class ColumnEdits {
    private ColumnEdits() {}

    /** A copy of {@code a} with {@code v} inserted at {@code pos}. */
    static long[] insert(long[] a, int pos, long v) {
        long[] out = Arrays.copyOf(a, a.length + 1);
        System.arraycopy(a, pos, out, pos + 1, a.length - pos);
        out[pos] = v;
        return out;
    }

    /** A per-entry array with {@code v} inserted; null while every entry is null. */
    static String[] insert(String[] a, int n, int pos, String v) {
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
    static HistoryColumns without(HistoryColumns h, long timestamp, long fingerprint) {
        return without(h, new long[] {timestamp}, new long[] {fingerprint});
    }

    /**
     * {@code h} without the entries counted at {@code timestamps[i]} with fingerprint {@code
     * fingerprints[i]} (one entry each; pairs it has no entry for are skipped), in one pass.
     */
    static HistoryColumns without(HistoryColumns h, long[] timestamps, long[] fingerprints) {
        // fingerprint -> the timestamps it is to be dropped at (fingerprints are all but unique)
        Map<Long, List<Long>> wanted = new HashMap<>();
        for (int k = 0; k < timestamps.length; k++) {
            wanted.computeIfAbsent(fingerprints[k] & Fingerprints.MASK, f -> new ArrayList<>(1))
                    .add(timestamps[k]);
        }
        boolean[] drop = new boolean[h.timestamps.length];
        int dropped = 0;
        for (int i = h.timestamps.length - 1; i >= 0 && !wanted.isEmpty(); i--) {
            List<Long> at = wanted.get(h.fingerprints[i]);
            if (at != null && at.remove(Long.valueOf(h.timestamps[i]))) {
                drop[i] = true;
                dropped++;
                if (at.isEmpty()) {
                    wanted.remove(h.fingerprints[i]);
                }
            }
        }
        if (dropped == 0) {
            return h;
        }
        int n = h.timestamps.length - dropped;
        if (n == 0) {
            return HistoryColumns.EMPTY;
        }
        long[] ts = new long[n];
        long[] fps = new long[n];
        int[] ci = new int[n];
        String[] ids = h.messageIds == null ? null : new String[n];
        String[] cats = h.categoryIndex == null ? null : new String[n];
        String[] camps = h.campaignIndex == null ? null : new String[n];
        int[] offs = h.offsets == null ? null : new int[n];
        long[] held = h.heldFor == null ? null : new long[n];
        for (int i = 0, j = 0; i < drop.length; i++) {
            if (drop[i]) {
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
        Tabled categories = Tabled.of(cats, OutboundMessage.DEFAULT_CATEGORY);
        return compacted(
                new Parts(ts, fps, ci, h.channels)
                        .ids(ids)
                        .categories(categories)
                        .campaigns(Tabled.of(camps, null))
                        .offsets(offs)
                        .heldFor(held)
                        .columns());
    }

    /** Entries [from, to) as a history of their own. */
    static HistoryColumns slice(HistoryColumns h, int from, int to) {
        return compacted(
                new Parts(
                                Arrays.copyOfRange(h.timestamps, from, to),
                                Arrays.copyOfRange(h.fingerprints, from, to),
                                Arrays.copyOfRange(h.channelIndex, from, to),
                                h.channels)
                        .ids(
                                h.messageIds == null
                                        ? null
                                        : Arrays.copyOfRange(h.messageIds, from, to))
                        .categories(Tabled.slice(h.categoryTable, h.categoryIndex, from, to))
                        .campaigns(Tabled.slice(h.campaignTable, h.campaignIndex, from, to))
                        .offsets(h.offsets == null ? null : Arrays.copyOfRange(h.offsets, from, to))
                        .heldFor(h.heldFor == null ? null : Arrays.copyOfRange(h.heldFor, from, to))
                        .columns());
    }

    /** {@code h} without the channels no entry uses, so the table never outgrows the entries. */
    static HistoryColumns compacted(HistoryColumns h) {
        int[] remap = new int[h.channels.length];
        Arrays.fill(remap, -1);
        int used = 0;
        for (int c : h.channelIndex) {
            if (remap[c] < 0) {
                remap[c] = used++;
            }
        }
        boolean identity = used == h.channels.length;
        for (int i = 0; i < remap.length && identity; i++) {
            identity = remap[i] == i;
        }
        if (identity) {
            return h;
        }
        String[] chs = new String[used];
        for (int i = 0; i < h.channels.length; i++) {
            if (remap[i] >= 0) {
                chs[remap[i]] = h.channels[i];
            }
        }
        int[] ci = new int[h.channelIndex.length];
        for (int i = 0; i < ci.length; i++) {
            ci[i] = remap[h.channelIndex[i]];
        }
        return Parts.of(h).channels(ci, chs).columns();
    }

    /**
     * A history as the serializer read it, whose tables must hold distinct values (no default
     * category) in order of first use, with indexes within them: {@code h}, or {@code h} rebuilt
     * where its tables break that.
     */
    static HistoryColumns canonical(HistoryColumns h) {
        if (Tabled.canonical(h.categoryTable, h.categoryIndex, OutboundMessage.DEFAULT_CATEGORY)
                && Tabled.canonical(h.campaignTable, h.campaignIndex, null)) {
            return h;
        }
        Tabled categories =
                Tabled.of(
                        Tabled.values(h.categoryTable, h.categoryIndex),
                        OutboundMessage.DEFAULT_CATEGORY);
        Tabled campaigns = Tabled.of(Tabled.values(h.campaignTable, h.campaignIndex), null);
        return compacted(Parts.of(h).categories(categories).campaigns(campaigns).columns());
    }

    /** {@code h} without the entries at or before {@code cutoff}. */
    static HistoryColumns prunedBefore(HistoryColumns h, long cutoff) {
        int from = 0;
        while (from < h.timestamps.length && h.timestamps[from] <= cutoff) {
            from++;
        }
        if (from == 0) {
            return h;
        }
        if (from == h.timestamps.length) {
            return HistoryColumns.EMPTY;
        }
        return slice(h, from, h.timestamps.length);
    }
}
