package io.freqcap.operators.segments;

import io.freqcap.schema.config.ControlRecord;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The control input's {@link SegmentCheck}, run once (parallelism 1) before the broadcast: every
 * capping task then applies a segment file or refuses it alike. Stateless: a control record read
 * again after a restart is checked again.
 */
public final class SegmentCheckFunction extends ProcessFunction<ControlRecord, ControlRecord> {
    private static final long serialVersionUID = 1L;

    private final FlinkFileLoader loader;

    public SegmentCheckFunction(FlinkFileLoader loader) {
        this.loader = loader;
    }

    @Override
    public void processElement(ControlRecord rec, Context ctx, Collector<ControlRecord> out) {
        out.collect(SegmentCheck.check(rec, loader));
    }
}
