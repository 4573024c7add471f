package io.freqcap.operators.capping.history;

import io.freqcap.schema.config.Scope;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.HistoryEntry;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.OutboundMessage;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A {@link LongHistory}'s entries: parallel arrays in timestamp order that grow at the end, live
 * between {@link #start} and {@link #end}. Per-entry strings and numbers other than the timestamp,
 * fingerprint and channel are null until an entry has one other than the default. Mutable, owned by
 * its long history.
 */
final class EntryArrays {
    long[] ts = new long[64];
    long[] fps = new long[64];
    int[] channelOf = new int[64];
    String[] ids;
    String[] categories;
    String[] campaigns;
    int[] offsets;

    /** Per entry, its send time minus its stamped timestamp; null until an entry was held. */
    long[] held;

    int start;
    int end;
    final List<String> channelNames = new ArrayList<>();

    /** The first entry with a timestamp after {@code t} ({@link #end} for none). */
    int firstAfter(long t) {
        return TimestampColumn.firstAfter(ts, start, end, t);
    }

    String channel(int i) {
        return channelNames.get(channelOf[i]);
    }

    String id(int i) {
        return ids == null ? null : ids[i];
    }

    String category(int i) {
        return categories == null ? OutboundMessage.DEFAULT_CATEGORY : categories[i];
    }

    String campaign(int i) {
        return campaigns == null ? null : campaigns[i];
    }

    int offset(int i) {
        return offsets == null ? 0 : offsets[i];
    }

    long heldFor(int i) {
        return held == null ? 0 : held[i];
    }

    HistoryEntry entry(int i) {
        return new HistoryEntry(
                ts[i], fps[i], channel(i), id(i), category(i), campaign(i), offset(i), heldFor(i));
    }

    /** The first entry from {@code i} on that was held ({@link #end} for none). */
    int nextHeld(int i) {
        if (held == null) {
            return end;
        }
        while (i < end && held[i] <= 0) {
            i++;
        }
        return i;
    }

    /** The held entries after {@code now}, up to {@code atMost}. */
    int heldWaiting(long now, int atMost) {
        int n = 0;
        for (int i = nextHeld(firstAfter(now)); i < end; i = nextHeld(i + 1)) {
            if (++n >= atMost) {
                break;
            }
        }
        return n;
    }

    /** The entries in {@code (after, upTo]} in a scope: {@link CountedHistory#forEachIn}. */
    void forEachIn(Scope scope, long after, long upTo, CountedHistory.EntryVisitor v) {
        int from = firstAfter(after);
        int to = upTo <= after ? from : TimestampColumn.firstAfter(ts, from, end, upTo);
        for (int i = from; i < to; i++) {
            if (scope.matches(channel(i), category(i), campaign(i))) {
                v.visit(ts[i], offset(i));
            }
        }
    }

    /**
     * The campaigns of the entries in {@code (after, upTo]}: {@link
     * CountedHistory#forEachCampaign}.
     */
    void forEachCampaign(long after, long upTo, CountedHistory.CampaignVisitor v) {
        int from = firstAfter(after);
        int to = upTo <= after ? from : TimestampColumn.firstAfter(ts, from, end, upTo);
        for (int i = from; i < to && campaigns != null; i++) {
            if (campaigns[i] != null) {
                v.visit(ts[i], offset(i), campaigns[i]);
            }
        }
    }

    /** Inserts an entry after those of equal timestamp, with this (masked) fingerprint. */
    void insert(HistoryEntry entry, long fingerprint) {
        long t = entry.timestamp();
        String channel = entry.channel();
        String messageId = entry.messageId();
        String category = entry.category();
        String campaign = entry.campaign();
        int offsetSeconds = entry.offsetSeconds();
        long heldFor = entry.heldFor();
        int c = channelNames.indexOf(channel);
        if (c < 0) {
            c = channelNames.size();
            channelNames.add(channel);
        }
        if (end == ts.length) {
            makeRoom();
        }
        int pos = end > start && ts[end - 1] <= t ? end : firstAfter(t);
        int tail = end - pos;
        System.arraycopy(ts, pos, ts, pos + 1, tail);
        System.arraycopy(fps, pos, fps, pos + 1, tail);
        System.arraycopy(channelOf, pos, channelOf, pos + 1, tail);
        ts[pos] = t;
        fps[pos] = fingerprint;
        channelOf[pos] = c;
        if (ids == null && messageId != null) {
            ids = new String[ts.length];
        }
        ids = put(ids, pos, tail, messageId);
        if (categories == null && !OutboundMessage.DEFAULT_CATEGORY.equals(category)) {
            categories = new String[ts.length];
            Arrays.fill(categories, OutboundMessage.DEFAULT_CATEGORY);
        }
        categories = put(categories, pos, tail, category);
        if (campaigns == null && campaign != null) {
            campaigns = new String[ts.length];
        }
        campaigns = put(campaigns, pos, tail, campaign);
        if (offsets == null && offsetSeconds != 0) {
            offsets = new int[ts.length];
        }
        if (offsets != null) {
            System.arraycopy(offsets, pos, offsets, pos + 1, tail);
            offsets[pos] = offsetSeconds;
        }
        if (held == null && heldFor != 0) {
            held = new long[ts.length];
        }
        if (held != null) {
            System.arraycopy(held, pos, held, pos + 1, tail);
            held[pos] = heldFor;
        }
        end++;
    }

    private static String[] put(String[] a, int pos, int tail, String v) {
        if (a != null) {
            System.arraycopy(a, pos, a, pos + 1, tail);
            a[pos] = v;
        }
        return a;
    }

    /** Removes entry {@code i}, moving the later ones. */
    void remove(int i) {
        int tail = end - i - 1;
        System.arraycopy(ts, i + 1, ts, i, tail);
        System.arraycopy(fps, i + 1, fps, i, tail);
        System.arraycopy(channelOf, i + 1, channelOf, i, tail);
        for (String[] a : new String[][] {ids, categories, campaigns}) {
            if (a != null) {
                System.arraycopy(a, i + 1, a, i, tail);
                a[end - 1] = null;
            }
        }
        if (offsets != null) {
            System.arraycopy(offsets, i + 1, offsets, i, tail);
        }
        if (held != null) {
            System.arraycopy(held, i + 1, held, i, tail);
        }
        end--;
    }

    /** Drops the entries before {@code to}, letting the collector have their strings. */
    void dropBefore(int to) {
        for (int i = start; i < to; i++) {
            if (ids != null) {
                ids[i] = null;
            }
            if (campaigns != null) {
                campaigns[i] = null;
            }
        }
        start = to;
    }

    /** The latest stamped timestamp of the live entries. */
    long latestStamped() {
        long max = Long.MIN_VALUE;
        for (int j = start; j < end; j++) {
            max = Math.max(max, ts[j] - heldFor(j));
        }
        return max;
    }

    /** Entries [lo, hi) as a short history. */
    UserHistory slice(int lo, int hi) {
        return UserHistory.entries(
                        Arrays.copyOfRange(ts, lo, hi),
                        Arrays.copyOfRange(fps, lo, hi),
                        Arrays.copyOfRange(channelOf, lo, hi),
                        channelNames.toArray(new String[0]))
                .ids(ids == null ? null : Arrays.copyOfRange(ids, lo, hi))
                .categories(categories == null ? null : Arrays.copyOfRange(categories, lo, hi))
                .campaigns(campaigns == null ? null : Arrays.copyOfRange(campaigns, lo, hi))
                .offsets(offsets == null ? null : Arrays.copyOfRange(offsets, lo, hi))
                .heldFor(held == null ? null : Arrays.copyOfRange(held, lo, hi))
                .build();
    }

    /** Moves the entries to the front when the dropped ones are a quarter, else doubles. */
    private void makeRoom() {
        int n = end - start;
        int capacity = start >= ts.length / 4 ? ts.length : ts.length * 2;
        ts = moved(ts, capacity, n);
        fps = moved(fps, capacity, n);
        channelOf = moved(channelOf, capacity, n);
        ids = moved(ids, capacity, n);
        categories = moved(categories, capacity, n);
        campaigns = moved(campaigns, capacity, n);
        offsets = offsets == null ? null : moved(offsets, capacity, n);
        held = held == null ? null : moved(held, capacity, n);
        start = 0;
        end = n;
    }

    private long[] moved(long[] from, int capacity, int n) {
        long[] to = capacity == from.length ? from : new long[capacity];
        System.arraycopy(from, start, to, 0, n);
        return to;
    }

    private int[] moved(int[] from, int capacity, int n) {
        int[] to = capacity == from.length ? from : new int[capacity];
        System.arraycopy(from, start, to, 0, n);
        return to;
    }

    private String[] moved(String[] from, int capacity, int n) {
        if (from == null) {
            return null;
        }
        String[] to = new String[capacity];
        System.arraycopy(from, start, to, 0, n);
        return to;
    }
}
