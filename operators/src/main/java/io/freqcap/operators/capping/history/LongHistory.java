package io.freqcap.operators.capping.history;

import io.freqcap.schema.config.Scope;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.Fingerprints;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.OutboundMessage;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A long history in memory: the counted messages of a heavy user, in arrays that grow at the end,
 * with a sorted column of timestamps per channel, category and campaign and a multiset of
 * fingerprints, so that a decision costs a few binary searches and a hash lookup however many
 * entries there are, and counting a message in time order appends. A message before the latest
 * moves the later entries (what a short history's copy costs anyway). Plain Java, mutable, owned by
 * one task's history store (or a backtest), grown by {@link HistoryGrowth}.
 *
 * <p>Stored as time buckets (contract.md §6 says nothing of storage): the entries of each {@code
 * bucketMillis} of time form one {@link UserHistory}, so a write touches only the buckets that
 * changed since the last one ({@link #takeChanged}): in time order the newest, and the oldest as
 * entries are pruned.
 *
 * <p>Why one long class: its columns, buckets and change tracking must move together on every add
 * and prune.
 */
public final class LongHistory implements CountedHistory {
    private final long bucketMillis;
    private long[] ts = new long[64];
    private long[] fps = new long[64];
    private int[] channelOf = new int[64];

    /** Per entry; each null until an entry has one other than the default. */
    private String[] ids;

    private String[] categories;
    private String[] campaigns;
    private int[] offsets;

    /** Per entry, its send time minus its stamped timestamp; null until an entry was held. */
    private long[] held;

    /** The latest stamped timestamp ({@link #latestStamped}). */
    private long stampedMax = Long.MIN_VALUE;

    private int start;
    private int end;

    /** What the entries take on the heap, estimated (see {@link #entryBytes}). */
    private long bytes;

    private final List<String> channelNames = new ArrayList<>();
    private final Map<Scope, TimestampColumn> columns = new HashMap<>();
    private final FingerprintCounts fingerprints = new FingerprintCounts();
    private final Set<Long> changed = new HashSet<>();

    LongHistory(long bucketMillis) {
        if (bucketMillis <= 0) {
            throw new IllegalArgumentException("bucketMillis must be positive: " + bucketMillis);
        }
        this.bucketMillis = bucketMillis;
    }

    /** A short history made long: every bucket is new. */
    public static LongHistory of(UserHistory h, long bucketMillis) {
        LongHistory l = new LongHistory(bucketMillis);
        l.append(h);
        for (int i = l.start; i < l.end; i++) {
            l.changed.add(l.bucket(l.ts[i]));
        }
        return l;
    }

    /** A long history as stored: bucket start / bucketMillis to the bucket's entries. */
    public static LongHistory load(long bucketMillis, Map<Long, UserHistory> buckets) {
        LongHistory l = new LongHistory(bucketMillis);
        for (UserHistory h : new TreeMap<>(buckets).values()) {
            l.append(h);
        }
        return l;
    }

    private void append(UserHistory h) {
        for (int i = 0; i < h.size(); i++) {
            insert(
                    h.timestamp(i),
                    h.fingerprint(i),
                    h.channel(i),
                    h.messageId(i),
                    h.category(i),
                    h.campaign(i),
                    h.offsetSeconds(i),
                    h.heldFor(i));
        }
    }

    long bucketMillis() {
        return bucketMillis;
    }

    private long bucket(long t) {
        return Math.floorDiv(t, bucketMillis);
    }

    /**
     * Counts one message (after entries of equal timestamp).
     *
     * @param t when it counts: its send time
     * @param heldFor its send time minus the timestamp it was stamped with (0: not held)
     */
    public void add(
            long t,
            long fingerprint,
            String channel,
            String messageId,
            String category,
            String campaign,
            int offsetSeconds,
            long heldFor) {
        insert(
                t,
                fingerprint & Fingerprints.MASK,
                channel,
                messageId,
                category,
                campaign,
                offsetSeconds,
                heldFor);
        changed.add(bucket(t));
    }

    private void insert(
            long t,
            long fingerprint,
            String channel,
            String messageId,
            String category,
            String campaign,
            int offsetSeconds,
            long heldFor) {
        int c = channelNames.indexOf(channel);
        if (c < 0) {
            c = channelNames.size();
            channelNames.add(channel);
        }
        if (end == ts.length) {
            makeRoom();
        }
        int pos =
                end > start && ts[end - 1] <= t
                        ? end
                        : TimestampColumn.firstAfter(ts, start, end, t);
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
        stampedMax = Math.max(stampedMax, t - heldFor);
        end++;
        bytes += entryBytes(messageId, category, campaign);
        fingerprints.add(fingerprint);
        column(Scope.channel(channel), true).add(t);
        column(Scope.category(category), true).add(t);
        if (campaign != null) {
            column(Scope.campaign(campaign), true).add(t);
        }
    }

    /**
     * The heap an entry takes, estimated from above: its slots in the columns of this class and in
     * {@link TimestampColumn}s and {@link FingerprintCounts}, and the strings it brings. Input
     * decides the strings (a heavy user with a new 128-character campaign per message), so the
     * budget of live long histories is kept in these bytes, not in entries.
     */
    static long entryBytes(String messageId, String category, String campaign) {
        long b = BYTES_PER_ENTRY;
        if (messageId != null) {
            b += stringBytes(messageId);
        }
        if (category != null && !OutboundMessage.DEFAULT_CATEGORY.equals(category)) {
            b += stringBytes(category);
        }
        if (campaign != null) {
            b += stringBytes(campaign) + SCOPE_BYTES; // its own scope and column, at worst
        }
        return b;
    }

    /** An entry without strings of its own: 3 longs, 4 ints and 3 references, 3 column slots. */
    public static final long BYTES_PER_ENTRY = 96;

    /** A {@link Scope} key and its {@link TimestampColumn} in {@link #columns}. */
    private static final long SCOPE_BYTES = 160;

    private static long stringBytes(String s) {
        return 48 + 2L * s.length();
    }

    /** What the entries take on the heap, estimated from above. */
    public long bytes() {
        return bytes;
    }

    private static String[] put(String[] a, int pos, int tail, String v) {
        if (a != null) {
            System.arraycopy(a, pos, a, pos + 1, tail);
            a[pos] = v;
        }
        return a;
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

    /**
     * Removes the entry counted at {@code t} with this fingerprint (a held message that stops
     * counting, contract.md §5); nothing when there is none.
     *
     * @return whether there was one
     */
    public boolean remove(long t, long fingerprint) {
        fingerprint &= Fingerprints.MASK;
        int i = TimestampColumn.firstAfter(ts, start, end, t - 1);
        while (i < end && ts[i] == t && fps[i] != fingerprint) {
            i++;
        }
        if (i == end || ts[i] != t) {
            return false;
        }
        String category = categories == null ? OutboundMessage.DEFAULT_CATEGORY : categories[i];
        String campaign = campaigns == null ? null : campaigns[i];
        bytes -= entryBytes(ids == null ? null : ids[i], category, campaign);
        fingerprints.remove(fps[i]);
        dropFromColumn(Scope.channel(channelNames.get(channelOf[i])), t);
        dropFromColumn(Scope.category(category), t);
        if (campaign != null) {
            dropFromColumn(Scope.campaign(campaign), t);
        }
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
        changed.add(bucket(t));
        stampedMax = Long.MIN_VALUE;
        for (int j = start; j < end; j++) {
            stampedMax = Math.max(stampedMax, ts[j] - (held == null ? 0 : held[j]));
        }
        return true;
    }

    private void dropFromColumn(Scope scope, long t) {
        TimestampColumn c = columns.get(scope);
        if (c != null && c.remove(t) == 0) {
            columns.remove(scope);
        }
    }

    /** Drops the entries at or before {@code cutoff}. */
    public void pruneThrough(long cutoff) {
        int to = TimestampColumn.firstAfter(ts, start, end, cutoff);
        long lastBucket = Long.MIN_VALUE;
        for (int i = start; i < to; i++) {
            bytes -=
                    entryBytes(
                            ids == null ? null : ids[i],
                            categories == null ? OutboundMessage.DEFAULT_CATEGORY : categories[i],
                            campaigns == null ? null : campaigns[i]);
            fingerprints.remove(fps[i]);
            long b = bucket(ts[i]);
            if (b != lastBucket) {
                changed.add(b);
                lastBucket = b;
            }
            if (ids != null) {
                ids[i] = null; // let the collector have them
            }
            if (campaigns != null) {
                campaigns[i] = null;
            }
        }
        start = to;
        columns.values().removeIf(c -> c.dropThrough(cutoff) == 0);
    }

    /** The buckets changed since the last call, each with its entries (empty: delete it). */
    public Map<Long, UserHistory> takeChanged() {
        Map<Long, UserHistory> out = new TreeMap<>();
        for (long b : changed) {
            long from = b * bucketMillis;
            int lo = TimestampColumn.firstAfter(ts, start, end, from - 1);
            int hi =
                    from > Long.MAX_VALUE - bucketMillis
                            ? end
                            : TimestampColumn.firstAfter(ts, lo, end, from + bucketMillis - 1);
            out.put(b, slice(lo, hi));
        }
        changed.clear();
        return out;
    }

    public boolean hasChanges() {
        return !changed.isEmpty();
    }

    /** Forgets what changed: it was written another way (or is gone). */
    public void markWritten() {
        changed.clear();
    }

    /** Every bucket held, as {@link #takeChanged} would give them, in time order. */
    Map<Long, UserHistory> buckets() {
        Map<Long, UserHistory> out = new TreeMap<>();
        int lo = start;
        while (lo < end) {
            long b = bucket(ts[lo]);
            long next = (b + 1) * bucketMillis;
            int hi = TimestampColumn.firstAfter(ts, lo, end, next - 1);
            out.put(b, slice(lo, hi));
            lo = hi;
        }
        return out;
    }

    /** This history as a short one. */
    public UserHistory toUserHistory() {
        return slice(start, end);
    }

    private UserHistory slice(int lo, int hi) {
        return UserHistory.of(
                Arrays.copyOfRange(ts, lo, hi),
                Arrays.copyOfRange(fps, lo, hi),
                Arrays.copyOfRange(channelOf, lo, hi),
                channelNames.toArray(new String[0]),
                ids == null ? null : Arrays.copyOfRange(ids, lo, hi),
                categories == null ? null : Arrays.copyOfRange(categories, lo, hi),
                campaigns == null ? null : Arrays.copyOfRange(campaigns, lo, hi),
                offsets == null ? null : Arrays.copyOfRange(offsets, lo, hi),
                held == null ? null : Arrays.copyOfRange(held, lo, hi));
    }

    @Override
    public int size() {
        return end - start;
    }

    @Override
    public boolean isEmpty() {
        return end == start;
    }

    @Override
    public long latest() {
        return ts[end - 1];
    }

    @Override
    public long latestStamped() {
        return stampedMax;
    }

    @Override
    public int heldWaiting(long now, int atMost) {
        int n = 0;
        if (held != null) {
            for (int i = TimestampColumn.firstAfter(ts, start, end, now); i < end; i++) {
                if (held[i] > 0 && ++n >= atMost) {
                    break;
                }
            }
        }
        return n;
    }

    @Override
    public Long firstHeldWaiting(long now) {
        if (held != null) {
            for (int i = TimestampColumn.firstAfter(ts, start, end, now); i < end; i++) {
                if (held[i] > 0) {
                    return ts[i];
                }
            }
        }
        return null;
    }

    @Override
    public boolean containsFingerprint(long fingerprint) {
        return fingerprints.contains(fingerprint & Fingerprints.MASK);
    }

    @Override
    public String[] channels() {
        List<String> used = new ArrayList<>();
        for (String c : channelNames) {
            if (column(Scope.channel(c), false).size() > 0) {
                used.add(c);
            }
        }
        return used.toArray(new String[0]);
    }

    /** The column of a scope (not {@link Scope#ALL}); an empty one unless {@code create}. */
    private TimestampColumn column(Scope scope, boolean create) {
        TimestampColumn c = columns.get(scope);
        if (c == null) {
            if (!create) {
                return TimestampColumn.EMPTY;
            }
            c = new TimestampColumn();
            columns.put(scope, c);
        }
        return c;
    }

    @Override
    public int count(Scope scope, long after, long upTo) {
        if (scope.kind() != Scope.Kind.ALL) {
            return column(scope, false).count(after, upTo);
        }
        if (upTo <= after) {
            return 0;
        }
        return TimestampColumn.firstAfter(ts, start, end, upTo)
                - TimestampColumn.firstAfter(ts, start, end, after);
    }

    @Override
    public long kthLatest(Scope scope, int k) {
        if (scope.kind() != Scope.Kind.ALL) {
            return column(scope, false).kthLatest(k);
        }
        if (k < 1 || k > size()) {
            throw new IllegalArgumentException("fewer entries in scope than " + k);
        }
        return ts[end - k];
    }

    @Override
    public void forEachIn(Scope scope, long after, long upTo, EntryVisitor v) {
        int from = TimestampColumn.firstAfter(ts, start, end, after);
        int to = upTo <= after ? from : TimestampColumn.firstAfter(ts, from, end, upTo);
        for (int i = from; i < to; i++) {
            if (inScope(i, scope)) {
                v.visit(ts[i], offsets == null ? 0 : offsets[i]);
            }
        }
    }

    private boolean inScope(int i, Scope scope) {
        return switch (scope.kind()) {
            case ALL -> true;
            case CHANNEL -> channelNames.get(channelOf[i]).equals(scope.name());
            case CATEGORY ->
                    (categories == null ? OutboundMessage.DEFAULT_CATEGORY : categories[i])
                            .equals(scope.name());
            case CAMPAIGN -> campaigns != null && scope.name().equals(campaigns[i]);
        };
    }

    @Override
    public long[] timestampsAfter(Scope scope, long after) {
        if (scope.kind() != Scope.Kind.ALL) {
            return column(scope, false).timestampsAfter(after);
        }
        return Arrays.copyOfRange(ts, TimestampColumn.firstAfter(ts, start, end, after), end);
    }
}
