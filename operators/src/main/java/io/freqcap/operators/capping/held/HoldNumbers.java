package io.freqcap.operators.capping.held;

import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.api.common.typeutils.base.LongSerializer;

/**
 * Numbers the messages a task holds in the order it decides them, so that preemption can take the
 * most recently decided first among equals (contract.md §6). Checkpointed as union operator state:
 * after a restore or a rescale every task goes on after the highest number any task had reached, so
 * a user's later held messages always have higher numbers than its earlier ones, whichever task
 * held them; a task replaying records after a failure numbers them as it did the first time.
 */
public final class HoldNumbers {
    static final ListStateDescriptor<Long> STATE =
            new ListStateDescriptor<>("hold-numbers-v1", LongSerializer.INSTANCE);

    private final ListState<Long> state;
    private long last;

    /** Reads the highest number a checkpoint holds (every task's: the union). */
    public HoldNumbers(OperatorStateStore store) throws Exception {
        state = store.getUnionListState(STATE);
        for (long n : state.get()) {
            last = Math.max(last, n);
        }
    }

    /** The number of the next message held: higher than any before it. */
    long next() {
        return ++last;
    }

    public void snapshot() throws Exception {
        state.update(List.of(last));
    }
}
