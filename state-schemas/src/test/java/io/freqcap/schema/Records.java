package io.freqcap.schema;

import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.message.RawRecord;
import io.freqcap.schema.preference.PreferenceRecord;
import io.freqcap.schema.receipt.DeliveryReceipt;
import java.nio.charset.StandardCharsets;

/**
 * Input records the tests of every module build: messages as the input topic carries them (JSON
 * bytes, parsed as the job parses them) and control records as the control topics carry them.
 */
public final class Records {
    private Records() {}

    /** A message of one user at {@code timestamp}, on {@code push}, category and zone absent. */
    public static Message message(String messageId, long userId, long timestamp) {
        return new Message(messageId, userId, timestamp, "push", null, null, null, null, 0);
    }

    /** An OutboundMessage's JSON, each optional field left out while it is null. */
    public record Message(
            String messageId,
            long userId,
            long timestamp,
            String channel,
            String category,
            String timezone,
            String campaignId,
            byte[] key,
            int priority) {

        public Message channel(String c) {
            return new Message(
                    messageId, userId, timestamp, c, category, timezone, campaignId, key, priority);
        }

        public Message category(String c) {
            return new Message(
                    messageId, userId, timestamp, channel, c, timezone, campaignId, key, priority);
        }

        public Message timezone(String z) {
            return new Message(
                    messageId, userId, timestamp, channel, category, z, campaignId, key, priority);
        }

        public Message campaign(String c) {
            return new Message(
                    messageId, userId, timestamp, channel, category, timezone, c, key, priority);
        }

        /** The Kafka key the record carries (none by default). */
        public Message key(byte[] k) {
            return new Message(
                    messageId,
                    userId,
                    timestamp,
                    channel,
                    category,
                    timezone,
                    campaignId,
                    k,
                    priority);
        }

        /** Its priority (contract.md §2; written only when not 0). */
        public Message priority(int p) {
            return new Message(
                    messageId, userId, timestamp, channel, category, timezone, campaignId, key, p);
        }

        public String json() {
            StringBuilder b = new StringBuilder();
            b.append("{\"messageId\":\"").append(messageId).append('"');
            b.append(",\"userId\":").append(userId);
            b.append(",\"channel\":\"").append(channel).append('"');
            field(b, "category", category);
            field(b, "timezone", timezone);
            field(b, "campaignId", campaignId);
            if (priority != 0) {
                b.append(",\"priority\":").append(priority);
            }
            b.append(",\"timestamp\":").append(timestamp);
            b.append(",\"payload\":{\"title\":\"hi\"}}");
            return b.toString();
        }

        public byte[] bytes() {
            return json().getBytes(StandardCharsets.UTF_8);
        }

        /** As read from partition 0 of topic {@code in} at {@code offset}. */
        public InboundMessage inbound(long offset) {
            return InboundMessage.of(new RawRecord(key, bytes(), "in", 0, offset));
        }

        public OutboundMessage outbound() {
            try {
                return OutboundMessage.parse(bytes());
            } catch (Exception e) {
                throw new IllegalArgumentException(json(), e);
            }
        }

        private static void field(StringBuilder b, String name, String value) {
            if (value != null) {
                b.append(",\"").append(name).append("\":\"").append(value).append('"');
            }
        }
    }

    /** A message's bytes as read from partition 0 of topic {@code in}, with no key. */
    public static InboundMessage inbound(byte[] value) {
        return InboundMessage.of(new RawRecord(null, value, "in", 0, 0));
    }

    /** A record of the config topic (a LimitConfig or a command). */
    public static ControlRecord config(String json) {
        return control(ControlRecord.Kind.CONFIG, "limit-config", json);
    }

    /** A record of the segments topic. */
    public static ControlRecord segment(String json) {
        return control(ControlRecord.Kind.SEGMENT, "segment-updates", json);
    }

    /** {@code forget-user} of one user, as the config topic carries it. */
    public static ControlRecord forgetUser(long userId) {
        return config("{\"command\": \"forget-user\", \"userId\": " + userId + "}");
    }

    private static ControlRecord control(ControlRecord.Kind kind, String topic, String json) {
        return new ControlRecord(kind, json.getBytes(StandardCharsets.UTF_8), topic, 0, 1);
    }

    /**
     * A record of the preferences topic keyed by {@code userId} (null: no key), its value {@code
     * json} (null: a tombstone), as read from partition 0 of {@code user-preferences} at {@code
     * offset}.
     */
    public static InboundMessage preference(Long userId, String json, long offset) {
        return PreferenceRecord.inbound(
                new RawRecord(
                        userId == null ? null : userId.toString().getBytes(StandardCharsets.UTF_8),
                        json == null ? null : json.getBytes(StandardCharsets.UTF_8),
                        "user-preferences",
                        0,
                        offset));
    }

    /** A record of the receipts topic, as read from partition 0 of {@code delivery-receipts}. */
    public static InboundMessage receipt(String json, long offset) {
        return DeliveryReceipt.inbound(
                new RawRecord(
                        null,
                        json.getBytes(StandardCharsets.UTF_8),
                        "delivery-receipts",
                        0,
                        offset));
    }

    /** A {@code failed} receipt of one message. */
    public static InboundMessage failed(String messageId, long userId, long offset) {
        return receipt(
                "{\"messageId\":\""
                        + messageId
                        + "\",\"userId\":"
                        + userId
                        + ",\"status\":\"failed\"}",
                offset);
    }

    /** A segment record of a full load with the bitmap inline (contract.md §4). */
    public static String segmentLoad(String id, long version, int priority, long... users) {
        return "{\"segmentId\":\""
                + id
                + "\",\"version\":"
                + version
                + ",\"priority\":"
                + priority
                + ",\"format\":\"roaring64\",\"bitmap\":\""
                + java.util.Base64.getEncoder()
                        .encodeToString(
                                io.freqcap.schema.segment.SegmentBitmap.of(users)
                                        .write(
                                                io.freqcap.schema.segment.SegmentBitmap.Format
                                                        .ROARING64))
                + "\"}";
    }
}
