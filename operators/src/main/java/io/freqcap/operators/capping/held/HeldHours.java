package io.freqcap.operators.capping.held;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * How many held messages wait per hour of send time (UTC hours), for the {@code heldDue} gauges
 * (what waits, by hour, in Grafana): kept with every hold and every message that leaves the hold,
 * checkpointed as union operator state of (key group, hour, count), so that a restore or a rescale
 * knows it without reading a held message. State written before it existed has none: then the task
 * counts the held messages of its key groups once, at its start ({@link HeldMessages#load}).
 */
public final class HeldHours {
    static final ListStateDescriptor<long[]> STATE =
            new ListStateDescriptor<>(
                    "held-hours-v1",
                    org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo
                            .LONG_PRIMITIVE_ARRAY_TYPE_INFO);

    static final long HOUR = 3_600_000L;

    /** Written by every task, so that a restore tells "none waiting" from "not kept". */
    private static final long[] MARKER = {-1, 0, 0};

    private final ListState<long[]> state;
    private final List<long[]> restored = new ArrayList<>();
    private final boolean restoredAny;
    private int maxParallelism;
    private KeyGroupRange range;

    /** (key group, hour) to its count, only where it is not 0: sparse, as hours can be many. */
    private final Map<Long, Long> byGroupAndHour = new HashMap<>();

    /** Hour to the count of all of this task's key groups, for the gauges. */
    private final TreeMap<Long, Long> totals = new TreeMap<>();

    /** Reads the counts a checkpoint holds (every task's: the union). */
    public HeldHours(OperatorStateStore store, boolean restoredState) throws Exception {
        state = store.getUnionListState(STATE);
        boolean any = false;
        for (long[] triple : state.get()) {
            restored.add(triple);
            any = true;
        }
        // Each task writes a marker besides its counts: state that has none is older.
        restoredAny = !restoredState || any;
    }

    /** Takes the counts of this task's key groups. */
    public void open(int maxParallelism, int parallelism, int subtask) {
        this.maxParallelism = maxParallelism;
        range =
                KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(
                        maxParallelism, parallelism, subtask);
        for (long[] t : restored) {
            if (range.contains((int) t[0])) {
                add((int) t[0], t[1], t[2]);
            }
        }
        restored.clear();
    }

    /**
     * Whether the restored state had no hours, while messages may be held (state of a version
     * before them): the task then counts them once.
     */
    boolean mustCount() {
        return !restoredAny;
    }

    /** A held message of {@code user} with send time {@code sendAt} came or went. */
    void add(long user, long sendAt, long delta) {
        add(KeyGroupRangeAssignment.assignToKeyGroup(user, maxParallelism), sendAt / HOUR, delta);
    }

    // Synchronized: the gauges read from the metric reporter's thread.
    private synchronized void add(int group, long hour, long delta) {
        // Epoch hours stay below 2^32 for 490,000 years; key groups below 2^15.
        long key = ((long) group << 32) | hour;
        if (byGroupAndHour.merge(key, delta, Long::sum) == 0) {
            byGroupAndHour.remove(key);
        }
        if (totals.merge(hour, delta, Long::sum) == 0) {
            totals.remove(hour);
        }
    }

    /**
     * Held messages whose send time falls in the hour {@code hoursAhead} from now's (0: this hour,
     * and any overdue ones about to go out).
     */
    public synchronized long due(long now, int hoursAhead) {
        long hour = now / HOUR + hoursAhead;
        if (hoursAhead == 0) {
            return sum(totals.headMap(hour, true));
        }
        Long n = totals.get(hour);
        return n == null ? 0 : n;
    }

    /** Held messages whose send time is {@code hoursAhead} hours from now's hour or later. */
    public synchronized long dueFrom(long now, int hoursAhead) {
        return sum(totals.tailMap(now / HOUR + hoursAhead, true));
    }

    private static long sum(Map<Long, Long> m) {
        long n = 0;
        for (long v : m.values()) {
            n += v;
        }
        return n;
    }

    public synchronized void snapshot() throws Exception {
        List<long[]> triples = new ArrayList<>();
        triples.add(MARKER);
        for (Map.Entry<Long, Long> e : byGroupAndHour.entrySet()) {
            long key = e.getKey();
            triples.add(new long[] {key >>> 32, key & 0xFFFF_FFFFL, e.getValue()});
        }
        state.update(triples);
    }
}
