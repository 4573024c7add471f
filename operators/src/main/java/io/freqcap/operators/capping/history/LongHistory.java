package io.freqcap.operators.capping.history;

import io.freqcap.schema.config.Scope;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.Fingerprints;
import io.freqcap.schema.history.HistoryEntry;
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
 * <p>The entries themselves are {@link EntryArrays}; this class keeps the indexes over them (scope
 * columns, fingerprints) and the buckets they changed in step with every add, remove and prune.
 */
public final class LongHistory implements CountedHistory {
    private final long bucketMillis;
    private final EntryArrays e = new EntryArrays();

    /** The latest stamped timestamp ({@link #latestStamped}). */
    private long stampedMax = Long.MIN_VALUE;

    /** What the entries take on the heap, estimated (see {@link #entryBytes}). */
    private long bytes;

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
        for (int i = l.e.start; i < l.e.end; i++) {
            l.changed.add(l.bucket(l.e.ts[i]));
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
            insert(h.entry(i));
        }
    }

    long bucketMillis() {
        return bucketMillis;
    }

    private long bucket(long t) {
        return Math.floorDiv(t, bucketMillis);
    }

    /** Counts one message (after entries of equal timestamp). */
    public void add(HistoryEntry entry) {
        insert(entry);
        changed.add(bucket(entry.timestamp()));
    }

    private void insert(HistoryEntry entry) {
        long t = entry.timestamp();
        String category = entry.category();
        String campaign = entry.campaign();
        long fingerprint = entry.fingerprint() & Fingerprints.MASK;
        e.insert(entry, fingerprint);
        stampedMax = Math.max(stampedMax, entry.stamped());
        bytes += entryBytes(entry.messageId(), category, campaign);
        fingerprints.add(fingerprint);
        column(Scope.channel(entry.channel()), true).add(t);
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

    /**
     * Removes the entry counted at {@code t} with this fingerprint (a held message that stops
     * counting, contract.md §5); nothing when there is none.
     *
     * @return whether there was one
     */
    public boolean remove(long t, long fingerprint) {
        fingerprint &= Fingerprints.MASK;
        int i = e.firstAfter(t - 1);
        while (i < e.end && e.ts[i] == t && e.fps[i] != fingerprint) {
            i++;
        }
        if (i == e.end || e.ts[i] != t) {
            return false;
        }
        String category = e.category(i);
        String campaign = e.campaign(i);
        bytes -= entryBytes(e.id(i), category, campaign);
        fingerprints.remove(e.fps[i]);
        dropFromColumn(Scope.channel(e.channel(i)), t);
        dropFromColumn(Scope.category(category), t);
        if (campaign != null) {
            dropFromColumn(Scope.campaign(campaign), t);
        }
        e.remove(i);
        changed.add(bucket(t));
        stampedMax = e.latestStamped();
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
        int to = e.firstAfter(cutoff);
        long lastBucket = Long.MIN_VALUE;
        for (int i = e.start; i < to; i++) {
            bytes -= entryBytes(e.id(i), e.category(i), e.campaign(i));
            fingerprints.remove(e.fps[i]);
            long b = bucket(e.ts[i]);
            if (b != lastBucket) {
                changed.add(b);
                lastBucket = b;
            }
        }
        e.dropBefore(to);
        columns.values().removeIf(c -> c.dropThrough(cutoff) == 0);
    }

    /** The buckets changed since the last call, each with its entries (empty: delete it). */
    public Map<Long, UserHistory> takeChanged() {
        Map<Long, UserHistory> out = new TreeMap<>();
        for (long b : changed) {
            long from = b * bucketMillis;
            int lo = e.firstAfter(from - 1);
            int hi =
                    from > Long.MAX_VALUE - bucketMillis
                            ? e.end
                            : TimestampColumn.firstAfter(e.ts, lo, e.end, from + bucketMillis - 1);
            out.put(b, e.slice(lo, hi));
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
        int lo = e.start;
        while (lo < e.end) {
            long b = bucket(e.ts[lo]);
            long next = (b + 1) * bucketMillis;
            int hi = TimestampColumn.firstAfter(e.ts, lo, e.end, next - 1);
            out.put(b, e.slice(lo, hi));
            lo = hi;
        }
        return out;
    }

    /** This history as a short one. */
    public UserHistory toUserHistory() {
        return e.slice(e.start, e.end);
    }

    @Override
    public int size() {
        return e.end - e.start;
    }

    @Override
    public boolean isEmpty() {
        return e.end == e.start;
    }

    @Override
    public long latest() {
        return e.ts[e.end - 1];
    }

    @Override
    public long latestStamped() {
        return stampedMax;
    }

    @Override
    public int heldWaiting(long now, int atMost) {
        int n = 0;
        if (e.held != null) {
            for (int i = e.firstAfter(now); i < e.end; i++) {
                if (e.held[i] > 0 && ++n >= atMost) {
                    break;
                }
            }
        }
        return n;
    }

    @Override
    public Long firstHeldWaiting(long now) {
        if (e.held != null) {
            for (int i = e.firstAfter(now); i < e.end; i++) {
                if (e.held[i] > 0) {
                    return e.ts[i];
                }
            }
        }
        return null;
    }

    @Override
    public void forEachHeldWaiting(long now, HeldVisitor v) {
        if (e.held != null) {
            for (int i = e.firstAfter(now); i < e.end; i++) {
                if (e.held[i] > 0) {
                    v.visit(e.ts[i], e.fps[i]);
                }
            }
        }
    }

    @Override
    public boolean containsFingerprint(long fingerprint) {
        return fingerprints.contains(fingerprint & Fingerprints.MASK);
    }

    @Override
    public HistoryEntry withFingerprint(long fingerprint) {
        fingerprint &= Fingerprints.MASK;
        if (!fingerprints.contains(fingerprint)) {
            return null;
        }
        for (int i = e.end - 1; i >= e.start; i--) {
            if (e.fps[i] == fingerprint) {
                return entry(i);
            }
        }
        return null;
    }

    @Override
    public void forEachHeldWaitingEntry(long now, java.util.function.Consumer<HistoryEntry> v) {
        if (e.held != null) {
            for (int i = e.firstAfter(now); i < e.end; i++) {
                if (e.held[i] > 0) {
                    v.accept(entry(i));
                }
            }
        }
    }

    private HistoryEntry entry(int i) {
        return new HistoryEntry(
                e.ts[i],
                e.fps[i],
                e.channel(i),
                e.id(i),
                e.category(i),
                e.campaign(i),
                e.offset(i),
                e.heldFor(i));
    }

    @Override
    public String[] channels() {
        List<String> used = new ArrayList<>();
        for (String c : e.channelNames) {
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
        return e.firstAfter(upTo) - e.firstAfter(after);
    }

    @Override
    public long kthLatest(Scope scope, int k) {
        if (scope.kind() != Scope.Kind.ALL) {
            return column(scope, false).kthLatest(k);
        }
        if (k < 1 || k > size()) {
            throw new IllegalArgumentException("fewer entries in scope than " + k);
        }
        return e.ts[e.end - k];
    }

    @Override
    public void forEachIn(Scope scope, long after, long upTo, EntryVisitor v) {
        int from = e.firstAfter(after);
        int to = upTo <= after ? from : TimestampColumn.firstAfter(e.ts, from, e.end, upTo);
        for (int i = from; i < to; i++) {
            if (scope.matches(e.channel(i), e.category(i), e.campaign(i))) {
                v.visit(e.ts[i], e.offset(i));
            }
        }
    }

    @Override
    public void forEachCampaign(long after, long upTo, CampaignVisitor v) {
        int from = e.firstAfter(after);
        int to = upTo <= after ? from : TimestampColumn.firstAfter(e.ts, from, e.end, upTo);
        for (int i = from; i < to && e.campaigns != null; i++) {
            if (e.campaigns[i] != null) {
                v.visit(e.ts[i], e.offset(i), e.campaigns[i]);
            }
        }
    }

    @Override
    public long[] timestampsAfter(Scope scope, long after) {
        if (scope.kind() != Scope.Kind.ALL) {
            return column(scope, false).timestampsAfter(after);
        }
        return Arrays.copyOfRange(e.ts, e.firstAfter(after), e.end);
    }
}
