package io.freqcap.operators.ingest;

import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import io.freqcap.schema.preference.PreferenceRecord;
import io.freqcap.schema.receipt.DeliveryReceipt;
import org.apache.flink.api.common.functions.MapFunction;

/**
 * Reads a record of the preferences or receipts topic (contract.md §10, §11) far enough to key it
 * by its user; an unreadable one goes on under a negative key with its error, to be audited as
 * INVALID_CONTROL by the capping operator, never an error here.
 */
public class UserInputParse implements MapFunction<RawRecord, InboundMessage> {
    private static final long serialVersionUID = 1L;

    private final InboundMessage.Kind kind;

    /**
     * @param kind {@link InboundMessage.Kind#PREFERENCE} or {@link InboundMessage.Kind#RECEIPT}
     */
    public UserInputParse(InboundMessage.Kind kind) {
        if (kind == InboundMessage.Kind.MESSAGE) {
            throw new IllegalArgumentException("messages are parsed by ParseFunction");
        }
        this.kind = kind;
    }

    @Override
    public InboundMessage map(RawRecord raw) {
        return kind == InboundMessage.Kind.PREFERENCE
                ? PreferenceRecord.inbound(raw)
                : DeliveryReceipt.inbound(raw);
    }
}
