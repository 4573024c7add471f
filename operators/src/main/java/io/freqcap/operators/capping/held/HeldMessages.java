package io.freqcap.operators.capping.held;

import io.freqcap.operators.capping.decision.HeldQueue;
import io.freqcap.operators.capping.state.UsersWithState;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldDeliverySerializer;
import io.freqcap.schema.held.HeldKey;
import io.freqcap.schema.held.HeldKeySerializer;
import io.freqcap.schema.held.HeldNotice;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.Predicate;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.runtime.state.KeyedStateBackend;

/**
 * The messages of the current user held for a later send time (contract.md §5), in keyed state
 * (RocksDB in the job, never the heap). State and timers are checkpointed and move with their key
 * group, so a held message is delivered once across failures, restarts and rescales.
 *
 * <p>Each held message is one entry of a map ({@link #STATE}) under its {@link HeldKey} (send time,
 * messageId fingerprint), with a timer of its own at its send time whose namespace is that
 * fingerprint ({@link Timers}). Holding is one blind write; a release is one point read and one
 * delete of the entry its timer names: constant work per message, however many a user holds, and no
 * state value larger than one message.
 *
 * <p>Held messages written by freqcap 0.3 (a list per user, {@link LegacyHeldLists}) are still read
 * and released: {@link #releaseLegacyDue}.
 *
 * <p>The {@code heldNow} gauge is kept per key group ({@link HeldCounts}), so a restore or rescale
 * knows it without reading a held message.
 */
public final class HeldMessages implements HeldQueue {
    /** Held messages: (send time, fingerprint) to the delivery. */
    public static final MapStateDescriptor<HeldKey, HeldDelivery> STATE =
            new MapStateDescriptor<>(
                    "held-v2", HeldKeySerializer.INSTANCE, HeldDeliverySerializer.INSTANCE);

    /** freqcap 0.3's held messages: a list per user. Read, released, never written. */
    public static final ListStateDescriptor<HeldDelivery> LEGACY = LegacyHeldLists.STATE;

    /** The timers of held messages: one per message, at its send time, named by fingerprint. */
    public interface Timers {
        void register(long sendAt, long fingerprint) throws Exception;

        void delete(long sendAt, long fingerprint) throws Exception;
    }

    private final MapState<HeldKey, HeldDelivery> state;
    private final LegacyHeldLists legacy;
    private final HeldCounts counts;
    private final HeldHours hours;
    private final HoldNumbers numbers;
    private final Timers timers;

    public HeldMessages(
            MapState<HeldKey, HeldDelivery> state,
            ListState<HeldDelivery> legacy,
            HeldCounts counts,
            HeldHours hours,
            HoldNumbers numbers,
            Timers timers) {
        this.state = state;
        this.legacy = new LegacyHeldLists(legacy);
        this.counts = counts;
        this.hours = hours;
        this.numbers = numbers;
        this.timers = timers;
    }

    /**
     * Keeps a message of {@code user}, the current key, until its send time, numbered after every
     * message held before it.
     */
    @Override
    public void hold(long user, HeldDelivery h, long now) throws Exception {
        // the clock does not matter here: a timer releases each at its send time
        HeldKey k = HeldKey.of(h);
        // The timer first: one without its message releases nothing, a message without its
        // timer would wait for good.
        timers.register(k.sendAt(), k.fingerprint());
        state.put(k, h.decidedAs(numbers.next()));
        counts.add(user, 1);
        hours.add(user, k.sendAt(), 1);
    }

    /**
     * Takes out the held message a timer names; null when it is gone already (withdrawn, or a timer
     * of freqcap 0.3's list).
     */
    public HeldDelivery release(long user, long sendAt, long fingerprint) throws Exception {
        HeldKey k = new HeldKey(sendAt, fingerprint);
        HeldDelivery h = state.get(k);
        if (h == null) {
            return null;
        }
        state.remove(k);
        counts.add(user, -1);
        hours.add(user, sendAt, -1);
        return h;
    }

    /**
     * Takes out the current user's messages held in freqcap 0.3's list that are due at {@code
     * time}, in send-time order; the others stay.
     *
     * @return how many were taken
     */
    public int releaseLegacyDue(long time, Consumer<HeldDelivery> release) throws Exception {
        List<HeldDelivery> due = legacy.take(h -> h.delivery().sendAt() <= time);
        due.forEach(release);
        return due.size();
    }

    /**
     * Takes out every held message of {@code user}, the current key, that {@code which} picks, in
     * send-time order, their timers deleted (a withdrawal: forget-user, cancel-held).
     */
    public List<HeldDelivery> withdraw(long user, Predicate<HeldDelivery> which) throws Exception {
        List<HeldDelivery> out = new ArrayList<>();
        List<HeldKey> keys = new ArrayList<>();
        for (Map.Entry<HeldKey, HeldDelivery> e : state.entries()) {
            if (which.test(e.getValue())) {
                keys.add(e.getKey());
                out.add(e.getValue());
            }
        }
        for (HeldKey k : keys) {
            drop(user, k);
        }
        out.addAll(legacy.take(which));
        out.sort(LegacyHeldLists.BY_SEND_TIME);
        return out;
    }

    /**
     * The current user's held messages under these keys: a point read each (preemption reads only
     * the ones its history says are waiting), and freqcap 0.3's list where it has one.
     */
    @Override
    public List<HeldDelivery> waiting(long user, List<HeldKey> keys) throws Exception {
        List<HeldDelivery> out = new ArrayList<>(keys.size());
        for (HeldKey k : keys) {
            HeldDelivery h = state.get(k);
            if (h != null) {
                out.add(h);
            }
        }
        if (legacy.count() > 0 && out.size() < keys.size()) {
            legacy.addWaiting(new HashSet<>(keys), out);
        }
        return out;
    }

    /**
     * The current user's held message whose held-topic key is {@code key}, or null: where UTF-8
     * cannot carry its messageId whole, the key names another fingerprint than its own.
     */
    public HeldDelivery withNoticeKey(byte[] key) throws Exception {
        for (HeldDelivery h : state.values()) {
            if (Arrays.equals(HeldNotice.key(h), key)) {
                return h;
            }
        }
        return null;
    }

    /**
     * The current user's held message whose messageId has this fingerprint, or null (a key the held
     * topic has, checked after the start, {@link HeldTopicStart#followUp}).
     */
    public HeldDelivery withFingerprint(long fingerprint) throws Exception {
        for (HeldKey k : state.keys()) {
            if (k.fingerprint() == fingerprint) {
                return state.get(k);
            }
        }
        return legacy.withFingerprint(fingerprint);
    }

    /**
     * Takes out these held messages of {@code user}, the current key, their timers deleted
     * (preempted): a delete each, as a release.
     */
    @Override
    public void take(long user, List<HeldDelivery> taken) throws Exception {
        if (legacy.count() == 0) {
            for (HeldDelivery h : taken) {
                drop(user, HeldKey.of(h));
            }
            return;
        }
        // Some may be in freqcap 0.3's list: those in the map go from the map.
        Set<HeldKey> keys = new HashSet<>();
        int n = 0;
        for (HeldDelivery h : taken) {
            HeldKey k = HeldKey.of(h);
            keys.add(k);
            if (state.contains(k)) {
                drop(user, k);
                n++;
            }
        }
        if (n < taken.size()) {
            legacy.take(h -> keys.contains(HeldKey.of(h)));
        }
    }

    /** Takes out one held message withdrawn before its send time, and its timer. */
    private void drop(long user, HeldKey k) throws Exception {
        state.remove(k);
        timers.delete(k.sendAt(), k.fingerprint());
        hours.add(user, k.sendAt(), -1);
        counts.add(user, -1);
    }

    /** Whether this task still holds messages in freqcap 0.3's lists. */
    public boolean hasLegacy() {
        return legacy.count() > 0;
    }

    /** Held messages of this task by hour of send time, for the {@code heldDue} gauges. */
    public HeldHours hours() {
        return hours;
    }

    /** Held messages of this task now (for the {@code heldNow} gauge). */
    public long heldNow() {
        return counts.total() + legacy.count();
    }

    /** Which held messages a visit wants the value of, by their user and fingerprint. */
    public interface Wanted {
        boolean test(long user, long fingerprint);
    }

    /**
     * Visits the messages this task holds that {@code wanted} picks, user by user, reading their
     * keys only and the value only of those it picks (a start that writes the notices the held
     * topic lacks, {@link HeldTopicStart}). Reads only.
     *
     * @param setKey switches the backend's current key, so that the state reads that user's
     */
    public void forEach(
            KeyedStateBackend<Long> backend,
            LongConsumer setKey,
            Wanted wanted,
            Consumer<HeldDelivery> visit)
            throws Exception {
        for (long user : UsersWithState.of(backend, STATE.getName())) {
            setKey.accept(user);
            List<HeldKey> picked = new ArrayList<>();
            for (HeldKey k : state.keys()) {
                if (wanted.test(user, k.fingerprint())) {
                    picked.add(k);
                }
            }
            for (HeldKey k : picked) {
                visit.accept(state.get(k));
            }
        }
        legacy.forEach(backend, setKey, wanted::test, visit);
    }

    /**
     * After a restore: counts this task's messages in freqcap 0.3's lists, if the restored state
     * has any, and, where the state was written before held messages were counted per hour, those
     * of every hour, reading their keys only.
     *
     * @param setKey switches the backend's current key, so that the state reads that user's
     */
    public void load(KeyedStateBackend<Long> backend, LongConsumer setKey) throws Exception {
        legacy.count(backend, setKey);
        if (!hours.mustCount()) {
            return;
        }
        for (long user : UsersWithState.of(backend, STATE.getName())) {
            setKey.accept(user);
            for (HeldKey k : state.keys()) {
                hours.add(user, k.sendAt(), 1);
            }
        }
    }
}
