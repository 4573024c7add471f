package io.freqcap.operators.capping;

import io.freqcap.operators.capping.held.HeldMessages;
import io.freqcap.operators.capping.held.HeldSide;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.apache.flink.runtime.state.KeyedStateBackend;

/**
 * What a {@link CappingOperator} asks of the function it runs ({@link CappingFunction}): the
 * operator switches keys and keeps held messages' timers, the function's parts do the rest.
 */
public interface CappingTask {
    /** Before the function opens: how to switch the current key. */
    void useKeySetter(LongConsumer setCurrentKey);

    /** Before the function opens: the held messages' timers. */
    void useHeldTimers(HeldMessages.Timers timers);

    /** Once open, keyed state restored: what the gauges and stores load from it. */
    void loadRestored(KeyedStateBackend<Long> backend) throws Exception;

    /** Held messages' timers, notices and the held topic. */
    HeldSide heldSide();

    /** Whether {@code user}'s key group is this task's. */
    boolean owns(long user);

    /** Whether this is task 0. */
    boolean first();

    /** Whether the Redis mirror is on. */
    boolean mirrorOn();

    /** Users whose Redis key waits to be written (0 with the mirror off). */
    int mirrorPending();

    /**
     * Writes the Redis key of every user whose counted messages changed since the last flush, each
     * user made the current key in turn.
     */
    void flushMirror(Consumer<MirrorWrite> out) throws Exception;
}
