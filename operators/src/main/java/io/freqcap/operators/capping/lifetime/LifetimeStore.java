package io.freqcap.operators.capping.lifetime;

import io.freqcap.operators.capping.decision.Lifetimes;
import io.freqcap.operators.capping.state.HistoryCache;
import io.freqcap.operators.capping.state.UsersWithState;
import io.freqcap.schema.lifetime.LifetimeCount;
import io.freqcap.schema.lifetime.LifetimeCountSerializer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;
import java.util.function.LongToIntFunction;
import java.util.function.UnaryOperator;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateFunction;
import org.roaringbitmap.longlong.Roaring64Bitmap;

/**
 * The users' lifetime counts (contract.md §3) in keyed state beside their histories, per campaign a
 * count and the latest send time, so that checkpoints, restores, rescales and upgrades keep them as
 * they keep histories. Lifetime limits need no history: this is all they read.
 *
 * <p>Counting starts once a config with a lifetime limit is in force (the control side says so and
 * keeps it, {@code counting}), and goes on under later configs. {@code forget-user} erases a user's
 * counts ({@link #clear}), {@code end-campaign} one campaign's of every user ({@link
 * #endCampaign}), and the sweep those past the retention ({@link #sweep}).
 *
 * <p>So that a capped message costs no RocksDB read or write: users without counts are known (a
 * bitmap, made from keyed state when the task opens, {@link #load}), and recent users' counts of
 * every campaign are cached in a slot each, written back to keyed state at {@link #flush} (before
 * every snapshot and every pass over keyed state) in RocksDB's key order, as histories are. A user
 * whose counts take more than a slot's 127 bytes (about six campaigns with ids of a dozen
 * characters) is read and written one campaign at a time.
 */
public final class LifetimeStore implements Lifetimes {
    /** Per user (the key) and campaign: its count and latest send time. */
    public static final MapStateDescriptor<String, LifetimeCount> STATE =
            new MapStateDescriptor<>(
                    "lifetime-counts-v1",
                    StringSerializer.INSTANCE,
                    LifetimeCountSerializer.INSTANCE);

    private final MapState<String, LifetimeCount> state;
    private final long retentionMillis;
    private final BooleanSupplier counting;
    private final LongConsumer keySetter;
    private final HistoryCache cache;
    private final Roaring64Bitmap users = new Roaring64Bitmap();

    /** Users whose counts were found longer than a slot: read one campaign at a time. */
    private final Roaring64Bitmap big = new Roaring64Bitmap();

    private final UserCounts counts = new UserCounts();

    /** Whose counts {@link #counts} holds, as they stand now, or {@link #NOBODY}. */
    private long countsOf = NOBODY;

    private static final long NOBODY = Long.MIN_VALUE;

    private final UserCounts flushing = new UserCounts();
    private final byte[] buffer = new byte[HistoryCache.MAX_BYTES];

    /** The time the last sweep dropped the counts expired at: none sooner can expire anew. */
    private long sweptFrom = Long.MIN_VALUE;

    /**
     * @param retentionMillis how long a count outlives its latest send time ({@code
     *     --lifetime-retention})
     * @param counting whether counts are kept: a config with a lifetime limit has been in force
     * @param keySetter makes a userId the current key (to write cached counts to keyed state)
     * @param cacheSlots slots of the cache of recent users' counts (0 for none)
     */
    public LifetimeStore(
            MapState<String, LifetimeCount> state,
            long retentionMillis,
            BooleanSupplier counting,
            LongConsumer keySetter,
            int cacheSlots) {
        this.state = state;
        this.retentionMillis = retentionMillis;
        this.counting = counting;
        this.keySetter = keySetter;
        this.cache = new HistoryCache(cacheSlots);
    }

    /**
     * After a restore: the users of this task with counts (the backend holds only this task's key
     * groups, so after a rescale too). Users outside it cost no RocksDB read.
     */
    public void load(KeyedStateBackend<Long> backend) throws Exception {
        UsersWithState.load(backend, STATE, users);
    }

    @Override
    public long countAt(long user, String campaign, long t) throws Exception {
        UserCounts all = read(user);
        LifetimeCount c = all == null ? state.get(campaign) : all.get(campaign);
        return c == null ? 0 : c.at(t, retentionMillis);
    }

    @Override
    public void count(long user, String campaign, long t, long sendAt) throws Exception {
        if (counting.getAsBoolean()) {
            change(user, campaign, c -> LifetimeCount.counted(c, t, sendAt, retentionMillis));
        }
    }

    @Override
    public void uncount(long user, String campaign) throws Exception {
        change(user, campaign, c -> c == null ? null : c.uncounted());
    }

    private void change(long user, String campaign, UnaryOperator<LifetimeCount> f)
            throws Exception {
        UserCounts all = read(user);
        if (all == null) { // too many campaigns for a slot
            LifetimeCount next = f.apply(state.get(campaign));
            if (next != null) {
                state.put(campaign, next);
            }
            return;
        }
        LifetimeCount next = f.apply(all.get(campaign));
        if (next == null) {
            return;
        }
        all.set(campaign, next);
        users.addLong(user);
        all.serialize();
        if (!cache.putDirty(user, all.bytes(), all.length())) {
            // what keyed state lacks: this count, and those the slot held newer than state
            all.writeChanged(state);
            if (all.length() > HistoryCache.MAX_BYTES) {
                big.addLong(user);
            }
        }
    }

    /**
     * Every count of the user (the current key), from the cache or keyed state; null when they take
     * more bytes than a slot holds: read those one at a time.
     */
    private UserCounts read(long user) throws Exception {
        if (countsOf == user) {
            return counts; // the decision read them, now they are counted
        }
        countsOf = NOBODY;
        if (!users.contains(user)) {
            counts.empty();
        } else {
            int length = cache.get(user, buffer);
            if (length > 0) {
                counts.read(buffer, 0, length);
            } else if (cache.slots() == 0 || big.contains(user)) {
                return null;
            } else if (counts.readAtMost(state, HistoryCache.MAX_BYTES) == null) {
                big.addLong(user);
                return null;
            } else {
                cache.put(user, counts.serialize().bytes(), counts.length());
            }
        }
        countsOf = user;
        return counts;
    }

    /**
     * Writes the counts only the cache holds to keyed state (before a snapshot or a scan of keyed
     * state), in RocksDB's key order.
     *
     * @param keyGroupOf the key group of a userId
     * @return how many users' counts
     */
    public int flush(LongToIntFunction keyGroupOf) throws Exception {
        countsOf = NOBODY; // read again from the slot, whose counts keyed state now has
        return cache.flushDirty(
                keyGroupOf,
                (user, bytes, offset, length) -> {
                    keySetter.accept(user);
                    flushing.writeChanged(bytes, offset, length, state);
                });
    }

    /** The task closed: the cache gives back its memory. */
    public void close() {
        cache.release();
    }

    /** Users of this task with counts. */
    public long users() {
        return users.getLongCardinality();
    }

    /** Erases every count of {@code user} (the current key): {@code forget-user}. */
    public void clear(long user) {
        countsOf = NOBODY;
        big.removeLong(user);
        state.clear();
        cache.forget(user);
        users.removeLong(user);
    }

    /** Before a pass over keyed state changes counts behind the cache: flushed, now forgotten. */
    private void forgetCache() {
        if (cache.anyDirty()) {
            throw new IllegalStateException("lifetime counts not flushed before a pass over state");
        }
        cache.clear();
        big.clear(); // a pass may make them short again
        countsOf = NOBODY;
    }

    /**
     * How {@link #endCampaign} and {@link #sweep} visit keyed state ({@code
     * ctx.applyToKeyedState}).
     */
    public interface Visitor {
        void visit(KeyedStateFunction<Long, MapState<String, LifetimeCount>> f) throws Exception;
    }

    /**
     * Drops every user's count of {@code campaign} (contract.md §7 {@code end-campaign}): a pass
     * over this task's users with counts.
     *
     * @return how many users had one
     */
    public long endCampaign(Visitor forEachUser, String campaign) throws Exception {
        forgetCache();
        long[] dropped = {0};
        forEachUser.visit(
                (user, s) -> {
                    if (s.contains(campaign)) {
                        s.remove(campaign);
                        dropped[0]++;
                        if (s.isEmpty()) {
                            users.removeLong(user);
                        }
                    }
                });
        return dropped[0];
    }

    /**
     * Drops the counts that no message from {@code from} on reads any more: their latest send time
     * lies the retention or more before it. A message stamped earlier than {@code from} is STALE or
     * would read them as 0 anyway, as the caller chooses {@code from}. Nothing to do when {@code
     * from} has not moved since the last sweep (after a restore, the first sweep passes once).
     *
     * @return how many counts were dropped
     */
    public long sweep(Visitor forEachUser, long from) throws Exception {
        if (from <= sweptFrom) {
            return 0; // nothing more has passed the retention since
        }
        forgetCache();
        long[] dropped = {0};
        forEachUser.visit(
                (user, s) -> {
                    List<String> gone = new ArrayList<>();
                    for (Map.Entry<String, LifetimeCount> e : s.entries()) {
                        if (e.getValue().expiredAt(from, retentionMillis)) {
                            gone.add(e.getKey());
                        }
                    }
                    for (String campaign : gone) {
                        s.remove(campaign);
                    }
                    if (!gone.isEmpty() && s.isEmpty()) {
                        users.removeLong(user);
                    }
                    dropped[0] += gone.size();
                });
        sweptFrom = from; // a pass that failed is made again
        return dropped[0];
    }
}
