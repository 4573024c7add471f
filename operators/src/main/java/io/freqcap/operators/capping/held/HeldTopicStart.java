package io.freqcap.operators.capping.held;

import io.freqcap.operators.capping.outputs.CappingOutputs;
import io.freqcap.operators.capping.outputs.HeldNotices;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.function.LongPredicate;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.api.common.typeutils.base.BooleanSerializer;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the held topic whole when a task starts (contract.md §12): after a start without state,
 * what an earlier job left live there was lost with that job's state; after a restore from state
 * written without {@code --held-topic}, the messages held meanwhile have no notice, and keys of
 * messages that left the hold meanwhile are still live. In both cases each task tombstones the live
 * keys of its key groups and then writes a notice for every message it holds, before it decides
 * anything. A task restored from state written with the option has nothing to do: its notices and
 * tombstones were committed with the checkpoint.
 *
 * <p>Whether the option was on is union operator state ({@code held-notices-v1}), so a rescale
 * keeps it; state written by a version before the held topic has none, which reads as off.
 */
public final class HeldTopicStart {
    private static final Logger LOG = LoggerFactory.getLogger(HeldTopicStart.class);

    static final ListStateDescriptor<Boolean> STATE =
            new ListStateDescriptor<>("held-notices-v1", BooleanSerializer.INSTANCE);

    private final ListState<Boolean> state;
    private final HeldNotices.LiveKeys topic;
    private final boolean needed;

    /**
     * @param topic the held topic, or null without {@code --held-topic}
     * @param restored whether the task starts from a checkpoint or savepoint
     */
    public HeldTopicStart(OperatorStateStore store, HeldNotices.LiveKeys topic, boolean restored)
            throws Exception {
        state = store.getUnionListState(STATE);
        boolean wereOn = false;
        for (Boolean on : state.get()) {
            wereOn |= Boolean.TRUE.equals(on);
        }
        this.topic = topic;
        this.needed = topic != null && !(restored && wereOn);
    }

    /** Whether this start must make the topic whole. */
    public boolean needed() {
        return needed;
    }

    /**
     * Tombstones the live keys this task owns, then writes a notice for every message it holds.
     *
     * @param owns whether a user's key group is this task's
     * @param first whether this is task 0, which also tombstones keys that name no user
     * @param setKey switches the backend's current key
     */
    public void makeWhole(
            KeyedStateBackend<Long> backend,
            HeldMessages held,
            LongPredicate owns,
            boolean first,
            LongConsumer setKey,
            CappingOutputs.Sink sink)
            throws Exception {
        if (!needed) {
            return;
        }
        List<byte[]> live = topic.read(owns, first);
        for (byte[] key : live) {
            sink.staleKey(key);
        }
        long[] noticed = {0};
        held.forEach(
                backend,
                setKey,
                h -> {
                    sink.reconciled(h);
                    noticed[0]++;
                });
        LOG.info(
                "held topic made whole at start: {} keys left live before tombstoned, {} held"
                        + " messages noticed",
                live.size(),
                noticed[0]);
    }

    /** Notes in the checkpoint whether notices are written, so a restore knows. */
    public void snapshot() throws Exception {
        state.update(List.of(topic != null));
    }
}
