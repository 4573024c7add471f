package io.freqcap.operators.capping.held;

import io.freqcap.operators.capping.state.UsersWithState;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldDeliverySerializer;
import io.freqcap.schema.held.HeldKey;
import io.freqcap.schema.history.Fingerprints;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.Predicate;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.KeyedStateBackend;

/**
 * The messages freqcap 0.3 held, a list per user ({@link #STATE}): read, released and withdrawn,
 * never written. A job's own state has none, and then nothing here reads state.
 */
final class LegacyHeldLists {
    /** freqcap 0.3's held messages: a list per user. */
    static final ListStateDescriptor<HeldDelivery> STATE =
            new ListStateDescriptor<>("held-v1", HeldDeliverySerializer.INSTANCE);

    static final Comparator<HeldDelivery> BY_SEND_TIME =
            Comparator.comparingLong((HeldDelivery h) -> h.delivery().sendAt())
                    .thenComparing(h -> h.message().messageId());

    private final ListState<HeldDelivery> lists;
    private long count;

    LegacyHeldLists(ListState<HeldDelivery> lists) {
        this.lists = lists;
    }

    /** Messages of this task still in the lists. */
    long count() {
        return count;
    }

    /** Takes out the current user's messages that {@code which} picks, in send-time order. */
    List<HeldDelivery> take(Predicate<HeldDelivery> which) throws Exception {
        Iterable<HeldDelivery> all = count == 0 ? null : lists.get();
        List<HeldDelivery> taken = new ArrayList<>(2);
        if (all == null) {
            return taken;
        }
        List<HeldDelivery> kept = new ArrayList<>(2);
        for (HeldDelivery h : all) {
            (which.test(h) ? taken : kept).add(h);
        }
        if (taken.isEmpty()) {
            return taken;
        }
        if (kept.isEmpty()) {
            lists.clear();
        } else {
            lists.update(kept);
        }
        taken.sort(BY_SEND_TIME);
        count -= taken.size();
        return taken;
    }

    /** The current user's messages under these keys, added to {@code out}. */
    void addWaiting(Set<HeldKey> wanted, List<HeldDelivery> out) throws Exception {
        forEachOfUser(
                h -> {
                    if (wanted.contains(HeldKey.of(h))) {
                        out.add(h);
                    }
                });
    }

    /** The current user's message whose messageId has this fingerprint, or null. */
    HeldDelivery withFingerprint(long fingerprint) throws Exception {
        Iterable<HeldDelivery> all = count == 0 ? null : lists.get();
        if (all != null) {
            for (HeldDelivery h : all) {
                if (Fingerprints.of(h.message().messageId()) == fingerprint) {
                    return h;
                }
            }
        }
        return null;
    }

    /** Visits the messages {@code wanted} picks, user by user. Reads only. */
    void forEach(
            KeyedStateBackend<Long> backend,
            LongConsumer setKey,
            BiPredicate<Long, Long> wanted,
            Consumer<HeldDelivery> visit)
            throws Exception {
        if (count == 0) {
            return;
        }
        for (long user : UsersWithState.of(backend, STATE.getName())) {
            setKey.accept(user);
            forEachOfUser(
                    h -> {
                        if (wanted.test(user, Fingerprints.of(h.message().messageId()))) {
                            visit.accept(h);
                        }
                    });
        }
    }

    /** After a restore: counts the messages of the lists, if the restored state has any. */
    void count(KeyedStateBackend<Long> backend, LongConsumer setKey) throws Exception {
        long n = 0;
        for (long user : UsersWithState.of(backend, STATE.getName())) {
            setKey.accept(user);
            Iterable<HeldDelivery> held = lists.get();
            if (held != null) {
                for (HeldDelivery h : held) {
                    n++;
                }
            }
        }
        count = n;
    }

    private void forEachOfUser(Consumer<HeldDelivery> visit) throws Exception {
        Iterable<HeldDelivery> all = count == 0 ? null : lists.get();
        if (all != null) {
            all.forEach(visit);
        }
    }
}
