package io.freqcap.operators.capping;

import io.freqcap.schema.mirror.MirrorLog;
import io.freqcap.schema.mirror.MirrorWrite;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;

/**
 * Redis as the mirror's writes leave it (contract.md §7, layout 2): per user, the value of its key
 * and its expiry, built by applying every write in order. Expiry by the wall clock is not modelled
 * (harness clocks are made up); every key must have one.
 */
public final class MirrorModel {
    /** One key: its value and when it expires. */
    public record Key(String value, long expireAt) {
        public List<MirrorLog.Entry> entries() {
            return MirrorLog.decode(value.getBytes(StandardCharsets.UTF_8));
        }

        public List<String> ids() {
            return entries().stream().map(MirrorLog.Entry::messageId).toList();
        }
    }

    private final Map<Long, Key> keys = new TreeMap<>();
    private int writes;

    /** Applies writes in order. */
    public MirrorModel apply(List<MirrorWrite> writes) {
        for (MirrorWrite w : writes) {
            this.writes++;
            if (w.deletes()) {
                keys.remove(w.userId());
            } else {
                if (w.expireAt() == Long.MIN_VALUE) {
                    throw new AssertionError("a key without an expiry: " + w);
                }
                keys.put(
                        w.userId(),
                        new Key(new String(w.log(), StandardCharsets.UTF_8), w.expireAt()));
            }
        }
        return this;
    }

    /** Applies what the harness wrote since its last flush (flushing the users that changed). */
    public MirrorModel apply(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h) {
        List<MirrorWrite> all = CappingHarnesses.mirrored(h);
        apply(all.subList(applied.getOrDefault(h, 0), all.size()));
        applied.put(h, all.size());
        return this;
    }

    /**
     * Skips what the harness wrote since its last flush (flushing the users that changed): the
     * writes a mirror writer dropped with its backlog, which never reach Redis.
     */
    public MirrorModel lose(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h) {
        applied.put(h, CappingHarnesses.mirrored(h).size());
        return this;
    }

    private final Map<Object, Integer> applied = new java.util.IdentityHashMap<>();

    /** Writes applied so far (a deletion counts one): several changes of a user flush as one. */
    public int writes() {
        return writes;
    }

    /**
     * The user's key expired (Redis deletes it by the wall clock, which the model does not read).
     */
    public void expire(long user) {
        keys.remove(user);
    }

    /** The user's key, or null when Redis has none. */
    public Key key(long user) {
        return keys.get(user);
    }

    /** The user's log (empty when there is no key). */
    public List<MirrorLog.Entry> entries(long user) {
        Key k = keys.get(user);
        return k == null ? List.of() : k.entries();
    }

    /** The messageIds of the user's log, in the log's order (empty when there is no key). */
    public List<String> ids(long user) {
        Key k = keys.get(user);
        return k == null ? List.of() : k.ids();
    }

    /** Every user with a key. */
    public Map<Long, Key> keys() {
        return keys;
    }
}
