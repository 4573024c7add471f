package io.freqcap.operators.capping.held;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * How many held messages wait in each key group of a task, for the {@code heldNow} gauge: kept with
 * every hold and release, checkpointed as union operator state of (key group, count) pairs, so that
 * after a restore or a rescale each task sums the counts of the key groups it now holds without
 * reading a held message.
 */
public final class HeldCounts {
    static final ListStateDescriptor<long[]> STATE =
            new ListStateDescriptor<>(
                    "held-counts-v1",
                    org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo
                            .LONG_PRIMITIVE_ARRAY_TYPE_INFO);

    private final ListState<long[]> state;
    private final Map<Integer, Long> restoredCounts = new HashMap<>();
    private int maxParallelism;
    private KeyGroupRange range;
    private long[] counts = new long[0];
    private long total;

    /** Reads the counts a checkpoint holds (every task's: the union). */
    public HeldCounts(OperatorStateStore store) throws Exception {
        state = store.getUnionListState(STATE);
        for (long[] pair : state.get()) {
            restoredCounts.merge((int) pair[0], pair[1], Long::sum);
        }
    }

    /** Takes the counts of this task's key groups. */
    public void open(int maxParallelism, int parallelism, int subtask) {
        this.maxParallelism = maxParallelism;
        range =
                KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(
                        maxParallelism, parallelism, subtask);
        counts = new long[range.getNumberOfKeyGroups()];
        for (Map.Entry<Integer, Long> e : restoredCounts.entrySet()) {
            if (range.contains(e.getKey())) {
                counts[e.getKey() - range.getStartKeyGroup()] = e.getValue();
                total += e.getValue();
            }
        }
    }

    /** A user's held messages changed by {@code delta}. */
    void add(long user, long delta) {
        if (delta == 0) {
            return;
        }
        int group = KeyGroupRangeAssignment.assignToKeyGroup(user, maxParallelism);
        counts[group - range.getStartKeyGroup()] += delta;
        total += delta;
    }

    public long total() {
        return total;
    }

    public void snapshot() throws Exception {
        List<long[]> pairs = new ArrayList<>();
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] != 0) {
                pairs.add(new long[] {range.getStartKeyGroup() + i, counts[i]});
            }
        }
        state.update(pairs);
    }
}
