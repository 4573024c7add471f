package io.freqcap.schema.held;

import io.freqcap.schema.common.ByteArrays;
import io.freqcap.schema.common.FormatByte;
import io.freqcap.schema.common.ImmutableSerializer;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.OutboundMessage;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.types.StringValue;

/**
 * Keyed state's coding of a {@link HeldDelivery}: a format byte, then its fields in order. The
 * format byte lets a later version read what this one wrote; an unknown one is refused, never
 * misread.
 *
 * <p>Format 2 (contract v4) adds the message's priority and its decision number after the fields of
 * format 1. A message of format 1 was held by a version without priorities: its priority is read
 * from its value where that carries a valid one, as the message's own (else 0), and its decision
 * number is 0, before anything held since.
 *
 * <p>Format 3 (contract v5) adds what withdrawing the message needs: its userId, channel, category
 * and campaignId (a boolean, then the text). Formats 1 and 2 read them from the value, leniently
 * ({@link OutboundMessage#parseDecided}): a field an earlier reader let through and this one would
 * refuse (0.3's {@code "priority": "high"}) reads as absent, so no old entry makes withdrawing
 * throw. A value unreadable even so (none is known) reads as channel {@code unknown} of the key's
 * user.
 *
 * <p>Format 4 (contract v5, §12) adds what its HeldNotice says: the JSON array of the violations
 * that held it (a length, then the bytes; -1 for none) and the zone its limits were read in (a
 * boolean, then the text). Formats 1 to 3 read them as null: such a message was held by a version
 * that did not keep them, and its notice says so ({@link HeldNotice}).
 */
public final class HeldDeliverySerializer extends ImmutableSerializer<HeldDelivery> {
    private static final long serialVersionUID = 1L;
    public static final HeldDeliverySerializer INSTANCE = new HeldDeliverySerializer();

    private HeldDeliverySerializer() {
        super(Snapshot.class);
    }

    static final byte FORMAT = 4;

    @Override
    public HeldDelivery createInstance() {
        return null;
    }

    @Override
    public void serialize(HeldDelivery h, DataOutputView out) throws IOException {
        FormatByte.write(out, FORMAT);
        StringValue.writeString(h.message().messageId(), out);
        out.writeLong(h.message().timestamp());
        out.writeLong(h.delivery().sendAt());
        ByteArrays.write(h.delivery().key(), out);
        ByteArrays.write(h.delivery().value(), out);
        StringValue.writeString(h.delivery().segment(), out);
        out.writeLong(h.delivery().configVersion());
        StringValue.writeString(h.delivery().shadow(), out);
        out.writeByte(h.message().priority());
        out.writeLong(h.decided());
        out.writeLong(h.message().userId());
        StringValue.writeString(h.message().channel(), out);
        StringValue.writeString(h.message().category(), out);
        out.writeBoolean(h.message().campaignId() != null);
        if (h.message().campaignId() != null) {
            StringValue.writeString(h.message().campaignId(), out);
        }
        ByteArrays.write(h.heldBy(), out);
        out.writeBoolean(h.timezone() != null);
        if (h.timezone() != null) {
            StringValue.writeString(h.timezone(), out);
        }
    }

    @Override
    public HeldDelivery deserialize(DataInputView in) throws IOException {
        int format = FormatByte.read(in, "held message", FORMAT);
        String messageId = StringValue.readString(in);
        long timestamp = in.readLong();
        long sendAt = in.readLong();
        byte[] key = ByteArrays.read(in);
        byte[] value = ByteArrays.read(in);
        String segment = StringValue.readString(in);
        long configVersion = in.readLong();
        String shadow = StringValue.readString(in);
        int priority = format == 1 ? OutboundMessage.priorityIn(value) : in.readByte();
        long decided = format == 1 ? 0 : in.readLong();
        OutboundMessage m;
        byte[] heldBy = null;
        String timezone = null;
        if (format < 3) {
            m = OutboundMessage.parseDecided(value);
            if (m == null) {
                m =
                        new OutboundMessage(
                                messageId,
                                userOf(key),
                                "unknown",
                                OutboundMessage.DEFAULT_CATEGORY,
                                timestamp);
            }
        } else {
            long userId = in.readLong();
            String channel = StringValue.readString(in);
            String category = StringValue.readString(in);
            String campaignId = in.readBoolean() ? StringValue.readString(in) : null;
            m =
                    new OutboundMessage(
                            messageId,
                            userId,
                            channel,
                            category,
                            timestamp,
                            null,
                            campaignId,
                            priority);
            if (format >= 4) {
                heldBy = ByteArrays.read(in);
                timezone = in.readBoolean() ? StringValue.readString(in) : null;
            }
        }
        return new HeldDelivery(
                new OutboundMessage(
                        messageId,
                        m.userId(),
                        m.channel(),
                        m.category(),
                        timestamp,
                        null,
                        m.campaignId(),
                        priority),
                new Delivery(
                        key,
                        value,
                        Decision.ALLOWED.name(),
                        segment,
                        configVersion,
                        shadow,
                        sendAt),
                decided,
                heldBy,
                timezone);
    }

    /** The user a held record's key names (its userId text, §1), or -1. */
    private static long userOf(byte[] key) {
        try {
            return key == null
                    ? -1
                    : Long.parseLong(new String(key, java.nio.charset.StandardCharsets.UTF_8));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    public static final class Snapshot extends SimpleTypeSerializerSnapshot<HeldDelivery> {
        public Snapshot() {
            super(() -> INSTANCE);
        }
    }
}
