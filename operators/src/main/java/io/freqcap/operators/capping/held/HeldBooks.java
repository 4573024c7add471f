package io.freqcap.operators.capping.held;

import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.OperatorStateStore;

/**
 * The held messages' operator state beside their keyed state: how many each key group holds (the
 * {@code heldNow} gauge, across rescales), how many per hour of send time (the {@code heldDue}
 * gauges) and the numbering that orders them.
 */
public record HeldBooks(HeldCounts counts, HeldHours hours, HoldNumbers numbers) {

    /**
     * The books as the task's operator state has them (empty at a first start).
     *
     * @param restored whether the task starts from a checkpoint or savepoint
     */
    public static HeldBooks restore(OperatorStateStore store, boolean restored) throws Exception {
        return new HeldBooks(
                new HeldCounts(store), new HeldHours(store, restored), new HoldNumbers(store));
    }

    public void snapshot() throws Exception {
        counts.snapshot();
        hours.snapshot();
        numbers.snapshot();
    }

    /** The held messages of the task's keyed state, kept in these books. */
    public HeldMessages open(RuntimeContext ctx, HeldMessages.Timers timers) {
        TaskInfo task = ctx.getTaskInfo();
        counts.open(
                task.getMaxNumberOfParallelSubtasks(),
                task.getNumberOfParallelSubtasks(),
                task.getIndexOfThisSubtask());
        hours.open(
                task.getMaxNumberOfParallelSubtasks(),
                task.getNumberOfParallelSubtasks(),
                task.getIndexOfThisSubtask());
        return new HeldMessages(
                ctx.getMapState(HeldMessages.STATE),
                ctx.getListState(HeldMessages.LEGACY),
                counts,
                hours,
                numbers,
                timers);
    }
}
