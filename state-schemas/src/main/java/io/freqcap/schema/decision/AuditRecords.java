package io.freqcap.schema.decision;

import com.fasterxml.jackson.core.JsonGenerator;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Writes AuditRecord JSON with the contract's field names and order, never larger than a bound
 * ({@code --max-record-bytes}): where the input's bytes ({@code raw}, or {@code message}) would
 * make a record too large, it carries their first bytes only, with {@code rawBytes} (the full
 * length) and {@code rawTruncated: true}, and no {@code message}.
 */
public final class AuditRecords {
    private AuditRecords() {}

    /** The contract's default {@code --max-record-bytes}, under Kafka's default record limit. */
    public static final int DEFAULT_MAX_BYTES = 1_000_000;

    /**
     * The smallest bound a record may be given: its own fields with every id at its bound (a
     * messageId of 128 astral characters, a preempting one and its reason, segments of 64) take up
     * to about 2.5 KB, and those are never cut.
     */
    public static final int MIN_MAX_BYTES = 4096;

    /** Error texts are cut here: a parser's message may quote what it read. */
    static final int MAX_ERROR_CHARS = 1000;

    /** The fields before and after the input's bytes. */
    private interface Fields {
        void write(JsonGenerator g) throws IOException;
    }

    /**
     * A REJECTED, DUPLICATE, STALE, FORGOTTEN, PREEMPTED or CANCELLED record (with what the shadow
     * rules would have decided, for a REJECTED one when the verdict has it; with {@code sendAt} and
     * {@code reason}, for a held message withdrawn, and {@code preemptedBy} for a PREEMPTED one).
     *
     * @param rawMessage the input value, a JSON object already validated, embedded as is
     * @param maxBytes the largest record written
     */
    public static AuditEvent decision(
            Verdict v, OutboundMessage m, long configVersion, byte[] rawMessage, int maxBytes) {
        byte[] json = null;
        byte[] key = Long.toString(m.userId()).getBytes(StandardCharsets.UTF_8);
        maxBytes -= key.length; // a record's size counts its key
        // The last guard: a record that the config's size bounds should keep small, but that is
        // too large anyway, keeps as many violations as fit, never failing its send.
        ShadowDecision shadow = v.shadow();
        for (int keep = Integer.MAX_VALUE; json == null || json.length > maxBytes; ) {
            json = decisionJson(v, m, configVersion, rawMessage, maxBytes, keep);
            int most =
                    Math.max(
                            v.violations().size(), shadow == null ? 0 : shadow.violations().size());
            if (json.length <= maxBytes || keep == 0) {
                break;
            }
            keep = Math.min(keep, most) / 2;
        }
        return AuditEvent.audit(key, json);
    }

    private static byte[] decisionJson(
            Verdict v,
            OutboundMessage m,
            long configVersion,
            byte[] rawMessage,
            int maxBytes,
            int keepViolations) {
        Decision decision = v.decision();
        ShadowDecision shadow = v.shadow();
        Fields head =
                g -> {
                    g.writeStringField("decision", decision.name());
                    g.writeStringField("messageId", m.messageId());
                    g.writeNumberField("userId", m.userId());
                    g.writeStringField("segment", v.segment());
                    g.writeStringField("channel", m.channel());
                    g.writeNumberField("timestamp", m.timestamp());
                    g.writeNumberField("configVersion", configVersion);
                    if (decision == Decision.REJECTED) {
                        writeViolations(g, v.violations(), keepViolations);
                        g.writeFieldName("retryAfter");
                        if (v.retryAfter() == null) {
                            g.writeNull();
                        } else {
                            g.writeNumber(v.retryAfter());
                        }
                        if (shadow != null) {
                            g.writeObjectFieldStart("shadow");
                            g.writeStringField("decision", shadow.label());
                            g.writeStringField("segment", shadow.segment());
                            writeViolations(g, shadow.violations(), keepViolations);
                            if (shadow.sendAt() != null) {
                                g.writeNumberField("sendAt", shadow.sendAt());
                            }
                            g.writeEndObject();
                        }
                    }
                    if (v.sendAt() != null) {
                        g.writeNumberField("sendAt", v.sendAt());
                    }
                    if (v.preemptedBy() != null) {
                        g.writeStringField("preemptedBy", v.preemptedBy());
                    }
                    if (v.reason() != null) {
                        g.writeStringField("reason", v.reason());
                    }
                };
        return bounded(
                head,
                g -> {},
                rawMessage,
                rawMessage == null ? 0 : rawMessage.length,
                true,
                maxBytes);
    }

    /** The MALFORMED record of an input record that could not be read. */
    public static AuditEvent malformed(InboundMessage in, int maxBytes) {
        return malformed(in, in.value() == null ? 0 : in.value().length, maxBytes);
    }

    /**
     * The MALFORMED record of an input of which only the first bytes were read.
     *
     * @param fullLength the input's length; more than {@code in.value().length} when cut
     */
    public static AuditEvent malformed(InboundMessage in, long fullLength, int maxBytes) {
        return AuditEvent.audit(
                null,
                unreadableJson(
                        Decision.MALFORMED,
                        in.error(),
                        in.value(),
                        fullLength,
                        in.topic(),
                        in.partition(),
                        in.offset(),
                        maxBytes));
    }

    /**
     * A MALFORMED or INVALID_CONTROL record: the error, the raw bytes and where they came from.
     *
     * @param maxBytes the largest record written
     */
    public static AuditEvent unreadable(
            Decision decision,
            String error,
            byte[] raw,
            String topic,
            int partition,
            long offset,
            int maxBytes) {
        return AuditEvent.audit(
                null,
                unreadableJson(
                        decision,
                        error,
                        raw,
                        raw == null ? 0 : raw.length,
                        topic,
                        partition,
                        offset,
                        maxBytes));
    }

    /**
     * An error text short enough that its record fits {@code maxBytes} with a topic name (at most
     * 249 ASCII characters) beside it, however it is escaped (six bytes a char at worst): at most
     * {@link #MAX_ERROR_CHARS}, and cut between code points, never inside a surrogate pair.
     */
    static String shortened(String error, int maxBytes) {
        int most = Math.min(MAX_ERROR_CHARS, Math.max(16, (maxBytes - 512) / 6));
        if (error.length() <= most) {
            return error;
        }
        int end = most;
        if (Character.isHighSurrogate(error.charAt(end - 1))) {
            end--;
        }
        return error.substring(0, end) + "...";
    }

    private static byte[] unreadableJson(
            Decision decision,
            String error,
            byte[] raw,
            long rawLength,
            String topic,
            int partition,
            long offset,
            int maxBytes) {
        String shortError = shortened(error, maxBytes);
        Fields head =
                g -> {
                    g.writeStringField("decision", decision.name());
                    g.writeStringField("error", shortError);
                };
        Fields source =
                g -> {
                    g.writeObjectFieldStart("source");
                    g.writeStringField("topic", topic);
                    g.writeNumberField("partition", partition);
                    g.writeNumberField("offset", offset);
                    g.writeEndObject();
                };
        return bounded(head, source, raw, rawLength, false, maxBytes);
    }

    /**
     * The record whole if it fits in {@code maxBytes}, else with as many first bytes of {@code raw}
     * as fit.
     *
     * @param asMessage whole, {@code raw} is embedded as the JSON {@code message}; else as base64
     *     {@code raw}
     */
    private static byte[] bounded(
            Fields head, Fields tail, byte[] raw, long rawLength, boolean asMessage, int maxBytes) {
        int held = raw == null ? 0 : raw.length;
        long wholeSize = asMessage ? rawLength : 4 * ((rawLength + 2) / 3);
        if (rawLength == held && wholeSize < maxBytes) { // else it cannot fit: skip writing it
            byte[] whole = write(head, tail, raw, rawLength, asMessage, -1);
            if (whole.length <= maxBytes) {
                return whole;
            }
        }
        int fixed = write(head, tail, raw, rawLength, false, 0).length;
        // base64 of 3n bytes is 4n characters
        int prefix = Math.max(0, maxBytes - fixed) / 4 * 3;
        byte[] cut = write(head, tail, raw, rawLength, false, Math.min(prefix, held));
        return cut.length <= maxBytes ? cut : write(head, tail, raw, rawLength, false, 0);
    }

    private static boolean hasBom(byte[] raw) {
        return raw.length >= 3
                && (raw[0] & 0xff) == 0xef
                && (raw[1] & 0xff) == 0xbb
                && (raw[2] & 0xff) == 0xbf;
    }

    /**
     * @param prefix -1 for the whole input, else how many of its first bytes go into {@code raw},
     *     with {@code rawBytes} and {@code rawTruncated}
     */
    private static byte[] write(
            Fields head, Fields tail, byte[] raw, long rawLength, boolean asMessage, int prefix) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256 + Math.max(prefix, 0));
        try (JsonGenerator g = Json.FACTORY.createGenerator(bytes)) {
            g.writeStartObject();
            head.write(g);
            if (prefix < 0 && asMessage) {
                g.writeFieldName("message");
                // A byte order mark before the object is read past (RFC 8259 §8.1), but is no
                // JSON inside one: the record embeds the object without it.
                int bom = hasBom(raw) ? 3 : 0;
                g.writeRawValue(new String(raw, bom, raw.length - bom, StandardCharsets.UTF_8));
            } else {
                g.writeFieldName("raw");
                if (raw == null) {
                    g.writeNull();
                } else if (prefix < 0) {
                    g.writeBinary(raw);
                } else {
                    g.writeBinary(Arrays.copyOf(raw, prefix));
                    g.writeNumberField("rawBytes", rawLength);
                    g.writeBooleanField("rawTruncated", true);
                }
            }
            tail.write(g);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /** The first {@code keep} violations, and {@code violationsTruncated} when there are more. */
    private static void writeViolations(JsonGenerator g, List<Violation> violations, int keep)
            throws IOException {
        g.writeFieldName("violations");
        writeViolationArray(g, violations, keep);
        if (violations.size() > keep) {
            g.writeNumberField("violationsTotal", violations.size());
            g.writeBooleanField("violationsTruncated", true);
        }
    }

    /** Violations as a JSON array of §5's form (a HeldNotice's {@code heldBy}, §12). */
    public static byte[] violationArray(List<Violation> violations) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 * (1 + violations.size()));
        try (JsonGenerator g = Json.FACTORY.createGenerator(out)) {
            writeViolationArray(g, violations, violations.size());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static void writeViolationArray(JsonGenerator g, List<Violation> violations, int keep)
            throws IOException {
        g.writeStartArray();
        for (Violation v : violations.subList(0, Math.min(keep, violations.size()))) {
            g.writeStartObject();
            g.writeStringField("scope", v.scope());
            if (v instanceof Violation.Exceeded e) {
                writeExceeded(g, e);
            } else if (v instanceof Violation.Lifetime l) {
                g.writeBooleanField("lifetime", true);
                g.writeNumberField("max", l.max());
                if (l.reserved() > 0) {
                    g.writeNumberField("reserved", l.reserved());
                }
                g.writeNumberField("count", l.count());
            } else if (v instanceof Violation.HoldFull h) {
                g.writeNumberField("max", h.max());
                g.writeNumberField("count", h.waiting());
            } else if (v instanceof Violation.Quiet q) {
                g.writeStringField("from", q.from());
                g.writeStringField("to", q.to());
            } else if (v instanceof Violation.OptedOut o) {
                if (o.channel() != null) {
                    g.writeStringField("channel", o.channel());
                }
                if (o.category() != null) {
                    g.writeStringField("category", o.category());
                }
            } else if (v instanceof Violation.Paused p) {
                g.writeNumberField("until", p.until());
            }
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    private static void writeExceeded(JsonGenerator g, Violation.Exceeded e) throws IOException {
        if (e.calendar() != null) {
            g.writeStringField("calendar", e.calendar());
        } else if (e.window() != null) {
            g.writeStringField("window", e.window());
        }
        g.writeNumberField("max", e.max());
        if (e.reserved() > 0) {
            g.writeNumberField("reserved", e.reserved());
        }
        g.writeNumberField("count", e.count());
        if (e.lowered() != null) {
            g.writeObjectFieldStart("fatigue");
            g.writeNumberField("unengaged", e.lowered().unengaged());
            g.writeNumberField("configured", e.lowered().configured());
            g.writeEndObject();
        }
    }
}
