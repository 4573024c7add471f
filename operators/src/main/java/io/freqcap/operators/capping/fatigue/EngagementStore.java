package io.freqcap.operators.capping.fatigue;

import io.freqcap.operators.capping.decision.Engagements;
import io.freqcap.operators.capping.state.UsersWithState;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.roaringbitmap.longlong.Roaring64Bitmap;

/**
 * The users' last engagements (contract.md §11) in keyed state beside their histories, so that
 * checkpoints, restores and rescales keep them as they keep histories; {@code forget-user} erases
 * one, and the sweep drops one with its user's history ({@link #sweep}).
 *
 * <p>A decision under a rule with {@code fatigue} reads it. So that users who never engaged cost no
 * RocksDB read, each task keeps in memory the set of its users that have one (made from keyed state
 * when it opens, {@link #load}), and the last engagements of recently seen users.
 */
public final class EngagementStore implements Engagements {
    /** Each user's last engagement (epoch ms); absent for a user who has none. */
    public static final ValueStateDescriptor<Long> STATE =
            new ValueStateDescriptor<>("last-engagement-v1", LongSerializer.INSTANCE);

    /** Users whose last engagement stays on the heap: about 80 bytes each. */
    static final int CACHED = 100_000;

    private final ValueState<Long> state;
    private final Roaring64Bitmap users = new Roaring64Bitmap();
    private final Map<Long, Long> cache =
            new LinkedHashMap<>(1024, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Long, Long> eldest) {
                    return size() > CACHED;
                }
            };

    public EngagementStore(ValueState<Long> state) {
        this.state = state;
    }

    /**
     * After a restore: the users of this task with a last engagement (the backend holds only this
     * task's key groups, so after a rescale too).
     */
    public void load(KeyedStateBackend<Long> backend) throws Exception {
        UsersWithState.load(backend, STATE, users);
    }

    @Override
    public long lastOf(long user) throws Exception {
        if (!users.contains(user)) {
            return Long.MIN_VALUE;
        }
        Long at = cache.get(user);
        if (at == null) {
            at = state.value();
            if (at == null) {
                return Long.MIN_VALUE;
            }
            cache.put(user, at);
        }
        return at;
    }

    @Override
    public void engage(long user, long at) throws Exception {
        if (at <= lastOf(user)) {
            return;
        }
        state.update(at);
        users.addLong(user);
        cache.put(user, at);
    }

    /** Erases the last engagement of {@code user} (the current key). */
    public void clear(long user) {
        if (users.contains(user)) {
            state.clear();
            users.removeLong(user);
            cache.remove(user);
        }
    }

    /**
     * Whether the last engagement {@code at} of {@code user} (the current key) goes: its history is
     * gone and it is as old as the entries a sweep clears.
     */
    public interface Gone {
        boolean test(long user, long at) throws Exception;
    }

    /**
     * Drops the last engagement of every user of this task that {@code gone} says goes: one as old
     * as the history entries the sweep clears, of a user whose history is gone (swept, or every
     * entry un-counted). Such an engagement lies before every message the job could still decide
     * against a counted entry, so dropping it changes no decision; a later one stays until it is
     * that old.
     *
     * @param forEachKept visits every user with a last engagement in keyed state, as the current
     *     key
     * @return how many were dropped
     */
    public long sweep(Visitor forEachKept, Gone gone) throws Exception {
        long[] dropped = {0};
        forEachKept.visit(
                (user, s) -> {
                    Long at = s.value();
                    if (at == null || gone.test(user, at)) {
                        s.clear();
                        users.removeLong(user);
                        cache.remove(user);
                        dropped[0]++;
                    }
                });
        return dropped[0];
    }

    /** How the sweep visits keyed state ({@code ctx.applyToKeyedState}). */
    public interface Visitor {
        void visit(org.apache.flink.runtime.state.KeyedStateFunction<Long, ValueState<Long>> f)
                throws Exception;
    }

    /** Users of this task with a last engagement. */
    public long users() {
        return users.getLongCardinality();
    }
}
