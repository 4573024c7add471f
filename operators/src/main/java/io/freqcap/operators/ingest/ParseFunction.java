package io.freqcap.operators.ingest;

import io.freqcap.schema.InboundMessage;
import io.freqcap.schema.RawRecord;
import org.apache.flink.api.common.functions.MapFunction;

/**
 * Parses input records; an unreadable one, or one larger than {@code --max-record-bytes}, becomes a
 * malformed {@link InboundMessage}, never an error.
 */
public class ParseFunction implements MapFunction<RawRecord, InboundMessage> {
    private static final long serialVersionUID = 1L;

    private final int maxRecordBytes;

    public ParseFunction(int maxRecordBytes) {
        this.maxRecordBytes = maxRecordBytes;
    }

    @Override
    public InboundMessage map(RawRecord raw) {
        return InboundMessage.of(raw, maxRecordBytes);
    }
}
