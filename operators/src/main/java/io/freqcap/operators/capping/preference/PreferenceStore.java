package io.freqcap.operators.capping.preference;

import io.freqcap.operators.capping.decision.Preferences;
import io.freqcap.operators.capping.state.UsersWithState;
import io.freqcap.schema.config.Limit;
import io.freqcap.schema.preference.UserPreferences;
import io.freqcap.schema.preference.UserPreferencesSerializer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.runtime.state.KeyedStateBackend;
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

    /** Users whose preferences stay on the heap: a few hundred bytes each, most of them. */
    static final int CACHED = 100_000;

    /**
     * The heap the cached preferences may take, by {@link #weight}: a maximal record (64 opted-out
     * categories of 64 astral characters, 64 category limit lists of 16 limits) weighs about 400
     * KB, so this many users' worth of those cannot take a TaskManager's heap.
     */
    static final long CACHED_BYTES = 32L << 20;

    private final ValueState<UserPreferences> state;
    private final Roaring64Bitmap users = new Roaring64Bitmap();
    private final long maxBytes;
    private final LinkedHashMap<Long, Cached> cache = new LinkedHashMap<>(1024, 0.75f, true);
    private long cachedBytes;

    private record Cached(UserPreferences prefs, long bytes) {}

    public PreferenceStore(ValueState<UserPreferences> state) {
        this(state, CACHED_BYTES);
    }

    /** A store whose cache holds at most {@code maxBytes} of preferences (tests bound it). */
    public PreferenceStore(ValueState<UserPreferences> state, long maxBytes) {
        this.state = state;
        this.maxBytes = maxBytes;
    }

    private UserPreferences cached(long user) {
        Cached c = cache.get(user);
        return c == null ? null : c.prefs();
    }

    private void cache(long user, UserPreferences p) {
        uncache(user);
        long bytes = weight(p);
        if (bytes > maxBytes) {
            return; // read from state each time: it alone would fill the cache
        }
        cache.put(user, new Cached(p, bytes));
        cachedBytes += bytes;
        var eldest = cache.values().iterator();
        while (cache.size() > CACHED || cachedBytes > maxBytes) {
            cachedBytes -= eldest.next().bytes();
            eldest.remove();
        }
    }

    private void uncache(long user) {
        Cached c = cache.remove(user);
        if (c != null) {
            cachedBytes -= c.bytes();
        }
    }

    /**
     * A generous estimate of the heap {@code p} takes: an object header and a few references per
     * record, two bytes a char per name, a limit's fields per limit.
     */
    static long weight(UserPreferences p) {
        long bytes = 160;
        for (String c : p.optOutChannels()) {
            bytes += 64 + 2L * c.length();
        }
        for (String c : p.optOutCategories()) {
            bytes += 64 + 2L * c.length();
        }
        bytes += 96L * p.limits().size();
        for (Map.Entry<String, List<Limit>> e : p.channels().entrySet()) {
            bytes += 96 + 2L * e.getKey().length() + 96L * e.getValue().size();
        }
        for (Map.Entry<String, List<Limit>> e : p.categories().entrySet()) {
            bytes += 96 + 2L * e.getKey().length() + 96L * e.getValue().size();
        }
        return bytes;
    }

    /** Bytes the cached preferences weigh (for tests). */
    long cachedBytes() {
        return cachedBytes;
    }

    /** Users whose preferences are cached (for tests). */
    int cachedUsers() {
        return cache.size();
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
        UsersWithState.load(backend, STATE, users);
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
        UserPreferences p = cached(user);
        if (p == null) {
            p = state.value();
            if (p != null) {
                cache(user, p);
            }
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
        cache(p.userId(), p);
        return Change.APPLIED;
    }

    /** Removes the preferences of {@code user} (the current key) and their version. */
    public Change clear(long user) {
        if (!users.contains(user)) {
            return Change.IGNORED;
        }
        state.clear();
        users.removeLong(user);
        uncache(user);
        return Change.APPLIED;
    }

    /** Users of this task with preferences (the {@code usersWithPreferences} gauge). */
    public long users() {
        return users.getLongCardinality();
    }
}
