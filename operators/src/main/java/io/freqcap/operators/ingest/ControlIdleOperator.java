package io.freqcap.operators.ingest;

import io.freqcap.schema.config.ControlRecord;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;

/**
 * Takes the control input out of event time: forwards control records, drops watermarks and
 * declares the stream idle for good. The capping operator's watermark is the minimum over its
 * active inputs, so it then follows the messages alone.
 *
 * <p>Why not a watermark of +infinity on the control input: whenever the message input went idle (a
 * quiet minute, a source without splits), the operator's watermark would jump to +infinity and the
 * next cleanup sweep would clear histories that still matter. An idle control input can never move
 * the watermark; when the messages are idle too, nothing is cleaned, which is safe.
 */
public class ControlIdleOperator extends AbstractStreamOperator<ControlRecord>
        implements OneInputStreamOperator<ControlRecord, ControlRecord> {
    private static final long serialVersionUID = 1L;

    @Override
    public void open() throws Exception {
        super.open();
        output.emitWatermarkStatus(WatermarkStatus.IDLE);
    }

    @Override
    public void processElement(StreamRecord<ControlRecord> element) {
        output.collect(element);
    }

    @Override
    public void processWatermark(Watermark mark) {}

    @Override
    public void processWatermarkStatus(WatermarkStatus status) {}
}
