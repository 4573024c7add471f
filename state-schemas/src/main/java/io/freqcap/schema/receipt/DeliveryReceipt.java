package io.freqcap.schema.receipt;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.JsonFields;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.message.RawRecord;

/**
 * What the sender reports after trying to deliver a message (contract.md §11): {@code failed} means
 * it never reached the user, so it stops counting; {@code opened} and {@code clicked} say the user
 * engaged; any other status changes nothing.
 *
 * @param timestamp when the sender tried, or null
 */
public record DeliveryReceipt(String messageId, long userId, String status, Long timestamp) {
    /** The status that un-counts a message. */
    public static final String FAILED = "failed";

    /** Statuses are short words; a longer one is no status this job could act on. */
    static final int MAX_STATUS_CHARS = 64;

    /**
     * Reads a record's value.
     *
     * @throws MalformedRecordException naming the field and what was wrong
     */
    public static DeliveryReceipt parse(byte[] value) throws MalformedRecordException {
        ObjectNode o = Json.readObject(value);
        String messageId = JsonFields.string(o, "messageId", OutboundMessage.MAX_MESSAGE_ID_CHARS);
        long userId = JsonFields.nonNegativeLong(o, "userId");
        String status = JsonFields.string(o, "status", MAX_STATUS_CHARS);
        JsonNode t = JsonFields.optional(o, "timestamp");
        return new DeliveryReceipt(
                messageId,
                userId,
                status,
                t == null ? null : JsonFields.nonNegativeLong(t, "timestamp"));
    }

    /** A record of the topic on its way to the capping operator, keyed by its user. */
    public static InboundMessage inbound(RawRecord raw) {
        try {
            return InboundMessage.other(
                    raw, parse(raw.value()).userId(), null, InboundMessage.Kind.RECEIPT);
        } catch (MalformedRecordException e) {
            return InboundMessage.other(raw, -1, e.getMessage(), InboundMessage.Kind.RECEIPT);
        }
    }

    /**
     * Whether the user engaged ({@code opened}, {@code clicked}): then the receipt's timestamp may
     * become the user's last engagement, which a rule's {@code fatigue} reads (contract.md §3).
     */
    public boolean engagement() {
        return "opened".equals(status) || "clicked".equals(status);
    }

    /** Whether the message never reached the user. */
    public boolean failed() {
        return FAILED.equals(status);
    }
}
