package io.freqcap.operators.capping.state;

import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldDeliverySerializer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.Predicate;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;

/**
 * The messages of the current user held for a later send time (contract.md §5), in keyed state
 * (RocksDB in the job, never the heap): by messageId, which a user's counted messages never share.
 * Each waits for a processing-time timer at its send time; state and timers are checkpointed and
 * move with their key group, so a held message is delivered once across failures, restarts and
 * rescales.
 */
public final class HeldMessages {
    public static final MapStateDescriptor<String, HeldDelivery> STATE =
            new MapStateDescriptor<>(
                    "held-v1", StringSerializer.INSTANCE, HeldDeliverySerializer.INSTANCE);

    private static final Comparator<HeldDelivery> BY_SEND_TIME =
            Comparator.comparingLong(HeldDelivery::sendAt).thenComparing(HeldDelivery::messageId);

    private final MapState<String, HeldDelivery> state;
    private long count;

    public HeldMessages(MapState<String, HeldDelivery> state) {
        this.state = state;
    }

    /** Keeps a message of the current user until its send time. */
    public void hold(HeldDelivery h) throws Exception {
        if (!state.contains(h.messageId())) {
            count++;
        }
        state.put(h.messageId(), h);
    }

    /**
     * Takes out the current user's held messages due at {@code time}, in send-time order.
     *
     * @return how many were taken
     */
    public int releaseDue(long time, Consumer<HeldDelivery> release) throws Exception {
        return take(h -> h.sendAt() <= time, release);
    }

    /** Takes out every held message of the current user, in send-time order. */
    public int releaseAll(Consumer<HeldDelivery> release) throws Exception {
        return take(h -> true, release);
    }

    private int take(Predicate<HeldDelivery> due, Consumer<HeldDelivery> out) throws Exception {
        List<HeldDelivery> taken = new ArrayList<>(2);
        Iterator<Map.Entry<String, HeldDelivery>> it = state.iterator();
        while (it.hasNext()) {
            HeldDelivery h = it.next().getValue();
            if (due.test(h)) {
                taken.add(h);
                it.remove();
            }
        }
        taken.sort(BY_SEND_TIME);
        taken.forEach(out);
        count -= taken.size();
        return taken.size();
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
            for (Iterator<String> it = state.keys().iterator(); it.hasNext(); it.next()) {
                n++;
            }
        }
        count = n;
    }
}
