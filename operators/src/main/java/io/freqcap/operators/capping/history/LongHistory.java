package io.freqcap.operators.capping.history;

import io.freqcap.schema.config.Scope;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.Fingerprints;
import io.freqcap.schema.history.HistoryEntry;
import io.freqcap.schema.history.UserHistory;
import java.util.Arrays;
import java.util.Map;
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
    private final HistoryBuckets buckets;
    private final EntryArrays e = new EntryArrays();

    /** The latest stamped timestamp ({@link #latestStamped}). */
    private long stampedMax = Long.MIN_VALUE;

    /** What the entries take on the heap, estimated ({@link EntryBytes}). */
    private long bytes;

    private final ScopeColumns columns = new ScopeColumns();
    private final FingerprintCounts fingerprints = new FingerprintCounts();

    LongHistory(long bucketMillis) {
        this.buckets = new HistoryBuckets(bucketMillis);
    }

    /** A short history made long: every bucket is new. */
    public static LongHistory of(UserHistory h, long bucketMillis) {
        LongHistory l = new LongHistory(bucketMillis);
        l.append(h);
        for (int i = l.e.start; i < l.e.end; i++) {
            l.buckets.changedAt(l.e.ts[i]);
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
        return buckets.millis();
    }

    /** Counts one message (after entries of equal timestamp). */
    public void add(HistoryEntry entry) {
        insert(entry);
        buckets.changedAt(entry.timestamp());
    }

    private void insert(HistoryEntry entry) {
        long t = entry.timestamp();
        String category = entry.category();
        String campaign = entry.campaign();
        long fingerprint = entry.fingerprint() & Fingerprints.MASK;
        e.insert(entry, fingerprint);
        stampedMax = Math.max(stampedMax, entry.stamped());
        bytes += EntryBytes.of(entry.messageId(), category, campaign);
        fingerprints.add(fingerprint);
        columns.add(t, entry.channel(), category, campaign);
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
        bytes -= EntryBytes.of(e.id(i), category, campaign);
        fingerprints.remove(e.fps[i]);
        columns.remove(t, e.channel(i), category, campaign);
        e.remove(i);
        buckets.changedAt(t);
        stampedMax = e.latestStamped();
        return true;
    }

    /** Drops the entries at or before {@code cutoff}. */
    public void pruneThrough(long cutoff) {
        int to = e.firstAfter(cutoff);
        long lastBucket = Long.MIN_VALUE;
        for (int i = e.start; i < to; i++) {
            bytes -= EntryBytes.of(e.id(i), e.category(i), e.campaign(i));
            fingerprints.remove(e.fps[i]);
            long b = buckets.of(e.ts[i]);
            if (b != lastBucket) {
                buckets.changed(b);
                lastBucket = b;
            }
        }
        e.dropBefore(to);
        columns.dropThrough(cutoff);
    }

    /** The buckets changed since the last call, each with its entries (empty: delete it). */
    public Map<Long, UserHistory> takeChanged() {
        return buckets.takeChanged(e);
    }

    public boolean hasChanges() {
        return buckets.hasChanges();
    }

    /** Forgets what changed: it was written another way (or is gone). */
    public void markWritten() {
        buckets.markWritten();
    }

    /** Every bucket held, as {@link #takeChanged} would give them, in time order. */
    Map<Long, UserHistory> buckets() {
        return buckets.all(e);
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
        return e.heldWaiting(now, atMost);
    }

    @Override
    public Long firstHeldWaiting(long now) {
        int i = e.nextHeld(e.firstAfter(now));
        return i == e.end ? null : e.ts[i];
    }

    @Override
    public void forEachHeldWaiting(long now, HeldVisitor v) {
        for (int i = e.nextHeld(e.firstAfter(now)); i < e.end; i = e.nextHeld(i + 1)) {
            v.visit(e.ts[i], e.fps[i]);
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
                return e.entry(i);
            }
        }
        return null;
    }

    @Override
    public void forEachHeldWaitingEntry(long now, java.util.function.Consumer<HistoryEntry> v) {
        for (int i = e.nextHeld(e.firstAfter(now)); i < e.end; i = e.nextHeld(i + 1)) {
            v.accept(e.entry(i));
        }
    }

    @Override
    public void forEachFrom(long from, LogVisitor v) {
        int i = from == Long.MIN_VALUE ? e.start : e.firstAfter(from - 1);
        for (; i < e.end; i++) {
            v.visit(e.ts[i], e.channel(i), e.id(i));
        }
    }

    @Override
    public String[] channels() {
        return columns.used(e.channelNames);
    }

    @Override
    public int count(Scope scope, long after, long upTo) {
        if (scope.kind() != Scope.Kind.ALL) {
            return columns.get(scope).count(after, upTo);
        }
        if (upTo <= after) {
            return 0;
        }
        return e.firstAfter(upTo) - e.firstAfter(after);
    }

    @Override
    public long kthLatest(Scope scope, int k) {
        if (scope.kind() != Scope.Kind.ALL) {
            return columns.get(scope).kthLatest(k);
        }
        if (k < 1 || k > size()) {
            throw new IllegalArgumentException("fewer entries in scope than " + k);
        }
        return e.ts[e.end - k];
    }

    @Override
    public void forEachIn(Scope scope, long after, long upTo, EntryVisitor v) {
        e.forEachIn(scope, after, upTo, v);
    }

    @Override
    public void forEachCampaign(long after, long upTo, CampaignVisitor v) {
        e.forEachCampaign(after, upTo, v);
    }

    @Override
    public long[] timestampsAfter(Scope scope, long after) {
        if (scope.kind() != Scope.Kind.ALL) {
            return columns.get(scope).timestampsAfter(after);
        }
        return Arrays.copyOfRange(e.ts, e.firstAfter(after), e.end);
    }
}
