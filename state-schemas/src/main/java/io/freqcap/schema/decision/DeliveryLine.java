package io.freqcap.schema.decision;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.freqcap.schema.message.OutboundMessage;
import java.nio.charset.StandardCharsets;

/**
 * A delivered message as one JSON line, the one encoding of {@code freqcap-simulate}'s output
 * (contract.md §8: {@code decision, messageId, userId, segment, configVersion}, {@code shadow} when
 * the config has shadow rules, {@code sendAt} for a held message) and of {@code freqcap-export}'s,
 * which adds the message's {@code channel, category, campaignId, timestamp} before {@code sendAt}.
 *
 * @param configVersion null when the delivery did not say
 * @param shadow null when the config has no shadow rules
 * @param sendAt null unless the message was held
 * @param message the message whose fields to add (export); null for none (simulate)
 */
public record DeliveryLine(
        String decision,
        String messageId,
        long userId,
        String segment,
        Long configVersion,
        String shadow,
        Long sendAt,
        OutboundMessage message) {

    private static final JsonStringEncoder ENCODER = JsonStringEncoder.getInstance();

    /** The line, without its newline. */
    public byte[] json() {
        StringBuilder b = new StringBuilder(160);
        string(b.append('{'), "decision", decision);
        string(b.append(','), "messageId", messageId);
        b.append(",\"userId\":").append(userId);
        string(b.append(','), "segment", segment);
        b.append(",\"configVersion\":").append(configVersion);
        if (shadow != null) {
            string(b.append(','), "shadow", shadow);
        }
        if (message != null) {
            string(b.append(','), "channel", message.channel());
            string(b.append(','), "category", message.category());
            if (message.campaignId() != null) {
                string(b.append(','), "campaignId", message.campaignId());
            }
            b.append(",\"timestamp\":").append(message.timestamp());
        }
        if (sendAt != null) {
            b.append(",\"sendAt\":").append(sendAt);
        }
        return b.append('}').toString().getBytes(StandardCharsets.UTF_8);
    }

    private static void string(StringBuilder b, String name, String value) {
        b.append('"').append(name).append("\":");
        if (value == null) {
            b.append("null");
        } else {
            ENCODER.quoteAsString(value, b.append('"'));
            b.append('"');
        }
    }
}
