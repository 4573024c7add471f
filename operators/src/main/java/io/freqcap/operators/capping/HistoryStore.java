package io.freqcap.operators.capping;

import io.freqcap.schema.UserHistory;
import io.freqcap.schema.UserHistorySerializer;
import java.io.IOException;
import java.util.function.LongConsumer;
import java.util.function.LongToIntFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Users' histories: RocksDB keyed state with a {@link HistoryCache} in front of it. A user seen
 * recently is read from the cache (no RocksDB read). With write-back (the operator can switch the
 * current key: {@link #writeBackThrough}), a new history stays in the cache only, and reaches keyed
 * state at {@link #flush}, which the function calls before every snapshot and every scan of keyed
 * state, in RocksDB's key order; without it, every write goes through to keyed state.
 */
final class HistoryStore {
    /** Each user's history, in keyed state (a versioned serializer of its own). */
    static final ValueStateDescriptor<UserHistory> STATE =
            new ValueStateDescriptor<>("history-v1", UserHistorySerializer.INSTANCE);

    private final ValueState<UserHistory> state;
    private final HistoryCache cache;
    private final DataOutputSerializer out = new DataOutputSerializer(128);
    private final DataInputDeserializer in = new DataInputDeserializer();
    private final byte[] buffer = new byte[HistoryCache.MAX_BYTES];
    private final Runnable onHit;
    private LongConsumer keySetter;

    /**
     * @param state the current key's history in keyed state
     * @param slots the cache's slots (0 for none)
     * @param onHit called for each history read from the cache
     */
    HistoryStore(ValueState<UserHistory> state, int slots, Runnable onHit) {
        this.state = state;
        this.cache = new HistoryCache(slots);
        this.onHit = onHit;
    }

    /** Histories are kept in the cache until {@link #flush}, which switches keys with this. */
    void writeBackThrough(LongConsumer setCurrentKey) {
        this.keySetter = setCurrentKey;
    }

    /** The history of {@code user}, which is the current key. */
    UserHistory get(long user) throws IOException {
        int length = cache.get(user, buffer);
        if (length > 0) {
            onHit.run();
            in.setBuffer(buffer, 0, length);
            return UserHistorySerializer.INSTANCE.deserialize(in);
        }
        UserHistory h = state.value();
        if (h == null) {
            h = UserHistory.EMPTY;
        }
        if (cache.slots() > 0) {
            serialize(h);
            cache.put(user, out.getSharedBuffer(), out.length());
        }
        return h;
    }

    /** Writes the new history of {@code user}, the current key. */
    void put(long user, UserHistory h) throws IOException {
        if (cache.slots() == 0) {
            state.update(h);
            return;
        }
        serialize(h);
        if (keySetter != null && cache.putDirty(user, out.getSharedBuffer(), out.length())) {
            return; // reaches keyed state at the next flush
        }
        // Write-through: no write-back, or a history too long for a slot.
        state.update(h);
        if (keySetter == null) {
            cache.put(user, out.getSharedBuffer(), out.length());
        }
    }

    /**
     * Writes the histories only the cache holds to keyed state, in key-group order.
     *
     * @return how many
     */
    int flush(LongToIntFunction keyGroupOf) throws Exception {
        if (keySetter == null) {
            return 0;
        }
        return cache.flushDirty(
                keyGroupOf,
                (user, bytes, offset, length) -> {
                    keySetter.accept(user);
                    in.setBuffer(bytes, offset, length);
                    state.update(UserHistorySerializer.INSTANCE.deserialize(in));
                });
    }

    /** Forgets what the cache holds (after keyed state was changed behind it). */
    void clearCache() {
        cache.clear();
    }

    private void serialize(UserHistory h) throws IOException {
        out.clear();
        UserHistorySerializer.INSTANCE.serialize(h, out);
    }
}
