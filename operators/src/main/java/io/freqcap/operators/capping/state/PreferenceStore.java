package io.freqcap.operators.capping.state;

import io.freqcap.operators.capping.decision.Preferences;
import io.freqcap.schema.preference.UserPreferences;
import io.freqcap.schema.preference.UserPreferencesSerializer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.roaringbitmap.longlong.Roaring64Bitmap;

/**
 * The users' preferences (contract.md §10) in keyed state next to their histories, so that no
 * lookup leaves the task: checkpoints, restores and rescales keep them as they keep histories.
 *
 * <p>Most users have none, and a RocksDB read for each of their messages would cost a share of
 * every decision. So each task also keeps in memory the set of its users that have preferences (a
 * few bytes per such user), made from keyed state when the task opens ({@link #load}) and kept up
 * to date as preferences are applied or erased: only a user in it costs a read.
 */
public final class PreferenceStore implements Preferences {
    /** Each user's preferences; absent for a user who has none. */
    public static final ValueStateDescriptor<UserPreferences> STATE =
            new ValueStateDescriptor<>("preferences-v1", UserPreferencesSerializer.INSTANCE);

    /** Users whose preferences stay on the heap: a few hundred bytes each. */
    static final int CACHED = 100_000;

    private final ValueState<UserPreferences> state;
    private final Roaring64Bitmap users = new Roaring64Bitmap();
    private final Map<Long, UserPreferences> cache =
            new LinkedHashMap<>(1024, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Long, UserPreferences> eldest) {
                    return size() > CACHED;
                }
            };

    public PreferenceStore(ValueState<UserPreferences> state) {
        this.state = state;
    }

    /** What applying a record did. */
    public enum Change {
        APPLIED,
        /** A version not above the one in force, or a tombstone for a user without any. */
        IGNORED
    }

    /**
     * After a restore: the users of this task with preferences (the backend holds only this task's
     * key groups, so after a rescale too).
     */
    public void load(KeyedStateBackend<Long> backend) throws Exception {
        List<Long> keys;
        try (var stream = backend.getKeys(STATE.getName(), VoidNamespace.INSTANCE)) {
            keys = stream.toList();
        }
        for (long user : keys) {
            users.addLong(user);
        }
    }

    /** Whether {@code user} has preferences (no state read). */
    public boolean has(long user) {
        return users.contains(user);
    }

    @Override
    public UserPreferences of(long user) throws Exception {
        if (!users.contains(user)) {
            return null;
        }
        UserPreferences p = cache.get(user);
        if (p == null) {
            p = state.value();
            cache.put(user, p);
        }
        return p;
    }

    /**
     * Puts {@code p} in force for its user (the current key) when its version is above the one in
     * force (contract.md §10).
     */
    public Change update(UserPreferences p) throws Exception {
        UserPreferences current = of(p.userId());
        if (current != null && p.version() <= current.version()) {
            return Change.IGNORED;
        }
        state.update(p);
        users.addLong(p.userId());
        cache.put(p.userId(), p);
        return Change.APPLIED;
    }

    /** Removes the preferences of {@code user} (the current key) and their version. */
    public Change clear(long user) {
        if (!users.contains(user)) {
            return Change.IGNORED;
        }
        state.clear();
        users.removeLong(user);
        cache.remove(user);
        return Change.APPLIED;
    }

    /** Users of this task with preferences (the {@code usersWithPreferences} gauge). */
    public long users() {
        return users.getLongCardinality();
    }
}
