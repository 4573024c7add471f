package io.freqcap.operators.ingest;

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
 *
 * <p>The preferences and receipts topics (contract.md §10, §11) join the messages' keyed input, and
 * go through this operator first for the same reason: their records carry no message time.
 */
public class ControlIdleOperator<T> extends AbstractStreamOperator<T>
        implements OneInputStreamOperator<T, T> {
    private static final long serialVersionUID = 1L;

    @Override
    public void open() throws Exception {
        super.open();
        output.emitWatermarkStatus(WatermarkStatus.IDLE);
    }

    @Override
    public void processElement(StreamRecord<T> element) {
        output.collect(element);
    }

    @Override
    public void processWatermark(Watermark mark) {}

    @Override
    public void processWatermarkStatus(WatermarkStatus status) {}
}
