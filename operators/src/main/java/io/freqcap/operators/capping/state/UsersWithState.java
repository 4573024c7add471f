package io.freqcap.operators.capping.state;

import java.util.List;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.roaringbitmap.longlong.Roaring64Bitmap;

/**
 * The users of a task that have a value in one keyed state, kept in memory so that those without
 * one cost no RocksDB read (a few bytes per such user): users' preferences, their last engagements.
 */
public final class UsersWithState {
    private UsersWithState() {}

    /** The users with a value in the keyed state named {@code state} in this backend, each once. */
    public static List<Long> of(KeyedStateBackend<Long> backend, String state) throws Exception {
        try (var keys = backend.getKeys(state, VoidNamespace.INSTANCE)) {
            return keys.distinct().toList();
        }
    }

    /**
     * Adds to {@code users} every user with a value in {@code state} in this backend: after a
     * restore the backend holds only this task's key groups, so after a rescale too.
     */
    public static void load(
            KeyedStateBackend<Long> backend, StateDescriptor<?, ?> state, Roaring64Bitmap users)
            throws Exception {
        try (var stream = backend.getKeys(state.getName(), VoidNamespace.INSTANCE)) {
            stream.forEach(users::addLong); // no list: tens of millions of users
        }
    }
}
