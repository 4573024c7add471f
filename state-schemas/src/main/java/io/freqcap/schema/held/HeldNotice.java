package io.freqcap.schema.held;

import com.fasterxml.jackson.core.JsonGenerator;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.message.OutboundMessage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The held-messages topic's records (contract.md §12): while a message waits, a HeldNotice under
 * the key {@code <userId>/<messageId>}; once it has left the hold, a tombstone under that key. The
 * topic's latest record per key is so what waits now.
 *
 * <p>A notice carries no message body, only what a support tool or a campaign system asks of a
 * waiting message: who, which campaign, when it goes out, in which zone, and what held it. It is
 * never larger than {@code --max-record-bytes}: its ids are bounded (§2, §3), and where the reasons
 * it waits would not fit, it says how many there were ({@code heldByTotal}) instead.
 */
public final class HeldNotice {
    private HeldNotice() {}

    /** The longest key: a userId of 20 characters, the slash, a messageId of 128 code points. */
    public static final int MAX_KEY_BYTES = 20 + 1 + 512;

    /** The key of {@code messageId} of {@code userId}: {@code <userId>/<messageId>} in UTF-8. */
    public static byte[] key(long userId, String messageId) {
        return (userId + "/" + messageId).getBytes(StandardCharsets.UTF_8);
    }

    /** The key of a held message. */
    public static byte[] key(HeldDelivery h) {
        return key(h.message().userId(), h.message().messageId());
    }

    /**
     * The userId a key names, or null when it is not a key this job writes (text before the first
     * slash that is not a userId).
     */
    public static Long userOf(byte[] key) {
        if (key == null) {
            return null;
        }
        String k = new String(key, StandardCharsets.UTF_8);
        int slash = k.indexOf('/');
        if (slash <= 0 || slash == k.length() - 1) {
            return null;
        }
        try {
            return Long.parseLong(k.substring(0, slash));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * The notice of a held message.
     *
     * @param configZone the config's zone, for a message held by a version that did not keep the
     *     zone its limits were read in (then the message's own zone, where its value has one)
     * @param maxBytes the largest record, key included
     */
    public static byte[] json(HeldDelivery h, String configZone, int maxBytes) {
        byte[] json = write(h, zoneOf(h, configZone), true);
        if (json.length + key(h).length > maxBytes) {
            json = write(h, zoneOf(h, configZone), false);
        }
        return json;
    }

    /** The zone a notice names: the one kept, else the message's own, else the config's. */
    private static String zoneOf(HeldDelivery h, String configZone) {
        if (h.timezone() != null) {
            return h.timezone();
        }
        OutboundMessage m = OutboundMessage.parseDecided(h.delivery().value());
        return m != null && m.timezone() != null ? m.timezone() : configZone;
    }

    private static byte[] write(HeldDelivery h, String zone, boolean withReasons) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(320);
        try (JsonGenerator g = Json.FACTORY.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("messageId", h.message().messageId());
            g.writeNumberField("userId", h.message().userId());
            g.writeStringField("segment", h.delivery().segment());
            g.writeStringField("channel", h.message().channel());
            g.writeStringField(
                    "category",
                    h.message().category() == null
                            ? OutboundMessage.DEFAULT_CATEGORY
                            : h.message().category());
            if (h.message().campaignId() != null) {
                g.writeStringField("campaignId", h.message().campaignId());
            }
            g.writeNumberField("priority", h.message().priority());
            g.writeNumberField("timestamp", h.message().timestamp());
            g.writeNumberField("sendAt", h.delivery().sendAt());
            g.writeStringField("timezone", zone);
            g.writeNumberField("configVersion", h.delivery().configVersion());
            g.writeFieldName("heldBy");
            if (h.heldBy() == null) {
                // Held by freqcap 0.4 or older, which did not keep why.
                g.writeStartArray();
                g.writeEndArray();
            } else if (withReasons) {
                g.writeRawValue(new String(h.heldBy(), StandardCharsets.UTF_8));
            } else {
                g.writeStartArray();
                g.writeEndArray();
                g.writeNumberField("heldByTotal", count(h.heldBy()));
                g.writeBooleanField("heldByTruncated", true);
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** How many entries a heldBy array holds. */
    private static int count(byte[] heldBy) {
        try {
            return Json.MAPPER.readTree(heldBy).size();
        } catch (IOException e) {
            return 0;
        }
    }
}
