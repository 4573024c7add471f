package io.freqcap.operators.capping.lifetime;

import io.freqcap.operators.capping.decision.Lifetimes;
import io.freqcap.schema.lifetime.LifetimeCount;
import io.freqcap.schema.lifetime.LifetimeCountSerializer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.KeyedStateFunction;

/**
 * The users' lifetime counts (contract.md §3) in keyed state beside their histories, per campaign a
 * count and the latest send time, so that checkpoints, restores, rescales and upgrades keep them as
 * they keep histories. Lifetime limits need no history: this is all they read.
 *
 * <p>Counting starts once a config with a lifetime limit is in force (the control side says so and
 * keeps it, {@code counting}), and goes on under later configs. {@code forget-user} erases a user's
 * counts ({@link #clear}), {@code end-campaign} one campaign's of every user ({@link
 * #endCampaign}), and the sweep those past the retention ({@link #sweep}).
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

    /** The time the last sweep dropped the counts expired at: none sooner can expire anew. */
    private long sweptFrom = Long.MIN_VALUE;

    /**
     * @param retentionMillis how long a count outlives its latest send time ({@code
     *     --lifetime-retention})
     * @param counting whether counts are kept: a config with a lifetime limit has been in force
     */
    public LifetimeStore(
            MapState<String, LifetimeCount> state, long retentionMillis, BooleanSupplier counting) {
        this.state = state;
        this.retentionMillis = retentionMillis;
        this.counting = counting;
    }

    @Override
    public long countAt(long user, String campaign, long t) throws Exception {
        LifetimeCount c = state.get(campaign);
        return c == null ? 0 : c.at(t, retentionMillis);
    }

    @Override
    public void count(long user, String campaign, long t, long sendAt) throws Exception {
        if (counting.getAsBoolean()) {
            state.put(
                    campaign,
                    LifetimeCount.counted(state.get(campaign), t, sendAt, retentionMillis));
        }
    }

    @Override
    public void uncount(long user, String campaign) throws Exception {
        LifetimeCount c = state.get(campaign);
        if (c != null) {
            state.put(campaign, c.uncounted());
        }
    }

    /** Erases every count of {@code user} (the current key): {@code forget-user}. */
    public void clear(long user) {
        state.clear();
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
        long[] dropped = {0};
        forEachUser.visit(
                (user, s) -> {
                    if (s.contains(campaign)) {
                        s.remove(campaign);
                        dropped[0]++;
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
        sweptFrom = from;
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
                    dropped[0] += gone.size();
                });
        return dropped[0];
    }
}
