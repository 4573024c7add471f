package io.freqcap.operators.capping;

import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import java.util.List;
import org.apache.flink.streaming.api.operators.co.CoBroadcastWithKeyedOperator;

/**
 * Flink's keyed-broadcast operator around a {@link CappingFunction}, which may then keep new
 * histories in its cache and write them to keyed state at the next checkpoint, sorted: the function
 * cannot switch the current key itself, the operator can. The function writes them in {@code
 * snapshotState}, which Flink calls before the keyed state backend takes its snapshot, and before
 * every scan of keyed state (sweep, rebuild-mirror).
 *
 * <p>Why an {@code @Internal} operator: Flink's public API gives a keyed-broadcast function no way
 * to switch the current key (it can only visit every key of a state), and write-back needs one.
 * This is the one place freqcap builds on Flink internals; every operator test (CappingHarnesses),
 * the state compatibility tests and every job run through it, so a Flink upgrade that changes it
 * fails them, and the function refuses to open anywhere else.
 */
public class CappingOperator
        extends CoBroadcastWithKeyedOperator<Long, InboundMessage, ControlRecord, Delivery> {
    private static final long serialVersionUID = 1L;

    public CappingOperator(CappingFunction function) {
        super(function, List.of(ControlState.SEGMENTS));
    }

    @Override
    public void open() throws Exception {
        // Before the function's open, which builds its history store with it; keyed state is
        // ready by then (initializeState runs first).
        CappingFunction function = (CappingFunction) userFunction;
        function.useKeySetter(user -> setCurrentKey(user));
        super.open();
        function.countHeld(getKeyedStateBackend());
    }
}
