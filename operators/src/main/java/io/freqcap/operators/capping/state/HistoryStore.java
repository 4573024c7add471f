package io.freqcap.operators.capping.state;

import io.freqcap.operators.capping.decision.Histories;
import io.freqcap.operators.capping.history.HistoryGrowth;
import io.freqcap.operators.capping.history.LongHistory;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.EncodedHistory;
import io.freqcap.schema.history.HistoryEntry;
import io.freqcap.schema.history.StoredHistory;
import io.freqcap.schema.history.StoredHistorySerializer;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.history.UserHistorySerializer;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongConsumer;
import java.util.function.LongToIntFunction;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Users' histories: RocksDB keyed state with a {@link HistoryCache} in front of it. A user seen
 * recently is read from the cache (no RocksDB read). A new history stays in the cache only and
 * reaches keyed state at {@link #flush}, which the function calls before every snapshot and every
 * scan of keyed state, in RocksDB's key order, switching keys with the operator's key setter (a
 * history too long for a slot goes to keyed state at once).
 *
 * <p><b>Long histories.</b> A history of more than {@link HistoryGrowth#LONG_AT} entries (a heavy
 * user: a test account, a campaign loop gone wrong) is kept as a {@link LongHistory}: in keyed
 * state as time buckets ({@link #BUCKETS}, marked by {@link #LONG}), in memory while the user is
 * active, so that a decision costs the same however long the history is. Only the buckets that
 * changed are written (at {@link #flush}, or at once without write-back). The live long histories
 * of a task hold at most {@link #LIVE_BYTES} together (estimated bytes of heap, whatever the
 * entries' strings); past that the least recently used are written and dropped, and read again from
 * their buckets when their user comes back. A long history pruned down to {@link
 * HistoryGrowth#SHORT_AT} entries is short again.
 */
public final class HistoryStore implements Histories {
    private static final Logger LOG = LoggerFactory.getLogger(HistoryStore.class);

    /**
     * Each user's short history, in keyed state (a versioned serializer of its own): decoded, or as
     * the cache's bytes ({@link #flush} hands them over without decoding and encoding them).
     */
    public static final ValueStateDescriptor<StoredHistory> STATE =
            new ValueStateDescriptor<>("history-v1", StoredHistorySerializer.INSTANCE);

    /** A long history's entries: bucket (timestamp / bucket width) to its entries. */
    public static final MapStateDescriptor<Long, UserHistory> BUCKETS =
            new MapStateDescriptor<>(
                    "history-buckets-v1", LongSerializer.INSTANCE, UserHistorySerializer.INSTANCE);

    /** Set for a user whose history is long: the width of its buckets, in milliseconds. */
    public static final ValueStateDescriptor<Long> LONG =
            new ValueStateDescriptor<>("history-long-v1", LongSerializer.INSTANCE);

    public static final long LIVE_BYTES = 256L << 20;

    /** Keyed state of the current key. */
    public record States(
            ValueState<StoredHistory> history,
            ValueState<Long> longMark,
            MapState<Long, UserHistory> buckets) {

        /** The states of a keyed function. */
        public static States of(RuntimeContext ctx) {
            return new States(ctx.getState(STATE), ctx.getState(LONG), ctx.getMapState(BUCKETS));
        }
    }

    private final States states;
    private final HistoryCache cache;
    private final LiveHistories live;
    private final DataOutputSerializer out = new DataOutputSerializer(128);
    private final DataInputDeserializer in = new DataInputDeserializer();
    private final byte[] buffer = new byte[HistoryCache.MAX_BYTES];
    private final Runnable onHit;
    private final LongConsumer keySetter;

    /**
     * @param setCurrentKey switches the operator's current key (to write histories kept in memory)
     * @param slots the cache's slots (0 for none)
     * @param onHit called for each history read from the cache
     * @param liveBudget estimated bytes the long histories in memory may take together
     */
    public HistoryStore(
            States states, LongConsumer setCurrentKey, int slots, Runnable onHit, long liveBudget) {
        this.states = states;
        this.keySetter = java.util.Objects.requireNonNull(setCurrentKey, "setCurrentKey");
        this.cache = new HistoryCache(slots);
        this.onHit = onHit;
        this.live = new LiveHistories(liveBudget, keySetter, states.buckets());
    }

    /**
     * The slots to use of {@code requested} in this JVM ({@link HistoryCache#slotsWithin}), with a
     * warning when cut.
     */
    public static int cacheSlots(int requested) {
        long maxHeap = Runtime.getRuntime().maxMemory();
        int slots = HistoryCache.slotsWithin(requested, maxHeap);
        if (slots < requested) {
            LOG.warn(
                    "History cache cut from {} to {} slots: at {} bytes a slot the {} MB heap of"
                            + " this TaskManager would not hold one for each slot's capping task;"
                            + " give TaskManagers more heap or set --history-cache",
                    requested,
                    slots,
                    HistoryCache.BYTES_PER_SLOT,
                    maxHeap >> 20);
        }
        return slots;
    }

    /** The history of {@code user}, which is the current key. */
    @Override
    public CountedHistory get(long user) throws Exception {
        LongHistory l = live.get(user);
        if (l != null) {
            return l;
        }
        int length = cache.get(user, buffer);
        if (length > 0) {
            onHit.run();
            in.setBuffer(buffer, 0, length);
            return UserHistorySerializer.INSTANCE.deserialize(in);
        }
        StoredHistory stored = states.history().value();
        UserHistory h = StoredHistorySerializer.decoded(stored);
        if (h == null) {
            Long bucketMillis = states.longMark().value();
            if (bucketMillis != null) {
                return live.add(user, LongHistory.load(bucketMillis, read(states.buckets())));
            }
            h = UserHistory.EMPTY;
        }
        if (cache.slots() > 0) {
            serialize(h);
            cache.put(user, out.getSharedBuffer(), out.length());
        }
        return h;
    }

    private static Map<Long, UserHistory> read(MapState<Long, UserHistory> buckets)
            throws Exception {
        Map<Long, UserHistory> all = new HashMap<>();
        for (Map.Entry<Long, UserHistory> e : buckets.entries()) {
            all.put(e.getKey(), e.getValue());
        }
        return all;
    }

    /**
     * Counts an ALLOWED message in the history of {@code user} (the current key), {@code before}
     * being what {@link #get} gave, and drops what no message can need any more.
     */
    @Override
    public void count(
            long user, CountedHistory before, HistoryEntry entry, long keptMillis, long now)
            throws Exception {
        if (before instanceof LongHistory l) {
            live.changing(l);
            CountedHistory next = HistoryGrowth.grown(l, entry, keptMillis, now);
            if (next instanceof UserHistory shortAgain) {
                live.droppedShort(user);
                l.markWritten();
                states.buckets().clear();
                states.longMark().clear();
                put(user, shortAgain);
                return;
            }
            live.changed(user, l);
            return;
        }
        CountedHistory next = HistoryGrowth.grown(before, entry, keptMillis, now);
        if (next instanceof UserHistory h) {
            put(user, h);
            return;
        }
        LongHistory l = (LongHistory) next;
        cache.forget(user);
        states.history().clear();
        states.longMark().update(HistoryGrowth.BUCKET_MILLIS);
        live.add(user, l);
    }

    /** Un-counts one entry of {@code user}, the current key (see {@link Histories#uncount}). */
    @Override
    public void uncount(long user, long countedAt, String messageId) throws Exception {
        CountedHistory before = get(user);
        if (before instanceof LongHistory l) {
            live.changing(l);
            HistoryGrowth.shrunk(l, countedAt, messageId);
            live.changed(user, l);
            return;
        }
        UserHistory after = (UserHistory) HistoryGrowth.shrunk(before, countedAt, messageId);
        if (after != before) {
            put(user, after);
        }
    }

    /** Writes a short history of {@code user}, the current key. */
    private void put(long user, UserHistory h) throws IOException {
        if (cache.slots() == 0) {
            states.history().update(h);
            return;
        }
        serialize(h);
        if (cache.putDirty(user, out.getSharedBuffer(), out.length())) {
            return; // reaches keyed state at the next flush
        }
        states.history().update(h); // too long for a slot
    }

    /**
     * Writes the histories only memory holds to keyed state: the cache's in key-group order, then
     * the changed buckets of long histories.
     *
     * @return how many histories
     */
    public int flush(LongToIntFunction keyGroupOf) throws Exception {
        int n =
                cache.flushDirty(
                        keyGroupOf,
                        (user, bytes, offset, length) -> {
                            keySetter.accept(user);
                            states.history().update(EncodedHistory.copyOf(bytes, offset, length));
                        });
        return n + live.flush();
    }

    /**
     * Erases everything kept of {@code user}, the current key: its short or long history in keyed
     * state, its cache slot and its live long history (contract.md §7, {@code forget-user}).
     *
     * @return the channels its history held (for the log), empty when none
     */
    public String[] forget(long user) throws Exception {
        String[] channels;
        try {
            channels = get(user).channels();
        } catch (IOException | RuntimeException unreadable) {
            channels = new String[0]; // erased all the same; Redis loses the user key at least
        }
        live.remove(user);
        cache.forget(user);
        states.history().clear();
        states.buckets().clear();
        states.longMark().clear();
        return channels;
    }

    /** The task closed: the cache and the live long histories give back their memory. */
    public void close() {
        cache.release();
        live.clear();
    }

    /** Forgets what memory holds (after keyed state was changed behind it); flush first. */
    public void clearCache() {
        cache.clear();
        live.clear();
    }

    /**
     * Whether keyed state holds no counted entry of the current key (read after {@link #flush}: the
     * cache may hold what state does not yet).
     */
    public boolean noneInState() throws Exception {
        UserHistory h = StoredHistorySerializer.decoded(states.history().value());
        return (h == null || h.isEmpty()) && states.longMark().value() == null;
    }

    public States states() {
        return states;
    }

    /** Long histories in memory, and their entries (metrics). */
    public LiveHistories live() {
        return live;
    }

    private void serialize(UserHistory h) throws IOException {
        out.clear();
        UserHistorySerializer.INSTANCE.serialize(h, out);
    }
}
