package io.freqcap.schema;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Writes AuditRecord JSON (SPEC §5) with the contract's field names and order. */
public final class AuditRecords {
    private AuditRecords() {}

    /**
     * A REJECTED, DUPLICATE or STALE record.
     *
     * @param violations only for REJECTED
     * @param retryAfter only for REJECTED; {@code null} when no time would allow the message
     * @param reason a sentence explaining a DUPLICATE or STALE decision; {@code null} otherwise
     * @param rawMessage the input value, a JSON object already validated, embedded as is
     */
    public static AuditEvent decision(
            Decision decision,
            OutboundMessage m,
            String segment,
            long configVersion,
            List<Violation> violations,
            Long retryAfter,
            String reason,
            byte[] rawMessage) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256 + rawMessage.length);
        try (JsonGenerator g = Json.FACTORY.createGenerator(bytes)) {
            g.writeStartObject();
            g.writeStringField("decision", decision.name());
            g.writeStringField("messageId", m.messageId());
            g.writeNumberField("userId", m.userId());
            g.writeStringField("segment", segment);
            g.writeStringField("channel", m.channel());
            g.writeNumberField("timestamp", m.timestamp());
            g.writeNumberField("configVersion", configVersion);
            if (decision == Decision.REJECTED) {
                g.writeArrayFieldStart("violations");
                for (Violation v : violations) {
                    g.writeStartObject();
                    g.writeStringField("scope", v.scope());
                    g.writeStringField("window", v.window());
                    g.writeNumberField("max", v.max());
                    g.writeNumberField("count", v.count());
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeFieldName("retryAfter");
                if (retryAfter == null) {
                    g.writeNull();
                } else {
                    g.writeNumber(retryAfter);
                }
            }
            if (reason != null) {
                g.writeStringField("reason", reason);
            }
            g.writeFieldName("message");
            g.writeRawValue(new String(rawMessage, StandardCharsets.UTF_8));
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new AuditEvent(
                Long.toString(m.userId()).getBytes(StandardCharsets.UTF_8), bytes.toByteArray());
    }

    /** A MALFORMED or INVALID_CONTROL record: the error, the raw bytes and where they came from. */
    public static AuditEvent unreadable(
            Decision decision, String error, byte[] raw, String topic, int partition, long offset) {
        ByteArrayOutputStream bytes =
                new ByteArrayOutputStream(128 + (raw == null ? 0 : raw.length * 2));
        try (JsonGenerator g = Json.FACTORY.createGenerator(bytes)) {
            g.writeStartObject();
            g.writeStringField("decision", decision.name());
            g.writeStringField("error", error);
            g.writeFieldName("raw");
            if (raw == null) {
                g.writeNull();
            } else {
                g.writeBinary(raw);
            }
            g.writeObjectFieldStart("source");
            g.writeStringField("topic", topic);
            g.writeNumberField("partition", partition);
            g.writeNumberField("offset", offset);
            g.writeEndObject();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new AuditEvent(null, bytes.toByteArray());
    }
}
