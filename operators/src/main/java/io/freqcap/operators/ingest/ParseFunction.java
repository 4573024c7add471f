package io.freqcap.operators.ingest;

import io.freqcap.schema.message.FutureBound;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import org.apache.flink.api.common.functions.MapFunction;

/**
 * Parses input records; an unreadable one, one larger than {@code --max-record-bytes} or one
 * stamped later than the wall clock plus {@code --max-future} becomes a malformed {@link
 * InboundMessage}, never an error.
 */
public class ParseFunction implements MapFunction<RawRecord, InboundMessage> {
    private static final long serialVersionUID = 1L;

    private final int maxRecordBytes;
    private final FutureBound maxFuture;

    public ParseFunction(int maxRecordBytes, FutureBound maxFuture) {
        this.maxRecordBytes = maxRecordBytes;
        this.maxFuture = maxFuture;
    }

    @Override
    public InboundMessage map(RawRecord raw) {
        return InboundMessage.of(raw, maxRecordBytes, maxFuture, System.currentTimeMillis());
    }
}
