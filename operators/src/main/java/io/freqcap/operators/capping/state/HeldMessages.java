package io.freqcap.operators.capping.state;

import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldDeliverySerializer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;

/**
 * The messages of the current user held for a later send time (contract.md §5), in keyed state
 * (RocksDB in the job, never the heap). Each waits for a processing-time timer at its send time;
 * state and timers are checkpointed and move with their key group, so a held message is delivered
 * once across failures, restarts and rescales.
 *
 * <p>List state: holding a message is one write that reads nothing (RocksDB merges it into the
 * user's list), and a release reads the user's few held messages at once; a map of them cost a read
 * per hold and an iterator per release (docs/benchmarks.md).
 */
public final class HeldMessages {
    public static final ListStateDescriptor<HeldDelivery> STATE =
            new ListStateDescriptor<>("held-v1", HeldDeliverySerializer.INSTANCE);

    private static final Comparator<HeldDelivery> BY_SEND_TIME =
            Comparator.comparingLong(HeldDelivery::sendAt).thenComparing(HeldDelivery::messageId);

    private final ListState<HeldDelivery> state;
    private long count;

    public HeldMessages(ListState<HeldDelivery> state) {
        this.state = state;
    }

    /** Keeps a message of the current user until its send time. */
    public void hold(HeldDelivery h) throws Exception {
        state.add(h);
        count++;
    }

    /**
     * Takes out the current user's held messages due at {@code time}, in send-time order; the
     * others stay.
     *
     * @return how many were taken
     */
    public int releaseDue(long time, Consumer<HeldDelivery> release) throws Exception {
        return take(time, release);
    }

    /** Takes out every held message of the current user, in send-time order. */
    public int releaseAll(Consumer<HeldDelivery> release) throws Exception {
        return take(Long.MAX_VALUE, release);
    }

    private int take(long time, Consumer<HeldDelivery> out) throws Exception {
        Iterable<HeldDelivery> all = state.get();
        if (all == null) {
            return 0;
        }
        List<HeldDelivery> due = new ArrayList<>(2);
        List<HeldDelivery> later = null;
        for (HeldDelivery h : all) {
            if (h.sendAt() <= time) {
                due.add(h);
            } else {
                if (later == null) {
                    later = new ArrayList<>(2);
                }
                later.add(h);
            }
        }
        if (due.isEmpty()) {
            return 0;
        }
        if (later == null) {
            state.clear();
        } else {
            state.update(later);
        }
        due.sort(BY_SEND_TIME);
        due.forEach(out);
        count -= due.size();
        return due.size();
    }

    /** Held messages of this task now (for the {@code heldNow} gauge). */
    public long heldNow() {
        return count;
    }

    /**
     * Counts the held messages of every user of this task, as a restore left them.
     *
     * @param setKey switches the backend's current key, so that the state reads that user's
     */
    public void countAll(KeyedStateBackend<Long> backend, LongConsumer setKey) throws Exception {
        List<Long> users;
        try (var keys = backend.getKeys(STATE.getName(), VoidNamespace.INSTANCE)) {
            users = keys.toList();
        }
        long n = 0;
        for (long user : users) {
            setKey.accept(user);
            Iterable<HeldDelivery> held = state.get();
            if (held != null) {
                for (HeldDelivery h : held) {
                    n++;
                }
            }
        }
        count = n;
    }
}
