package io.freqcap.schema.held;

import io.freqcap.schema.common.ByteArrays;
import io.freqcap.schema.common.FormatByte;
import io.freqcap.schema.common.ImmutableSerializer;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.types.StringValue;

/**
 * Keyed state's coding of a {@link HeldDelivery}: a format byte, then its fields in order. The
 * format byte lets a later version read what this one wrote; an unknown one is refused, never
 * misread.
 */
public final class HeldDeliverySerializer extends ImmutableSerializer<HeldDelivery> {
    private static final long serialVersionUID = 1L;
    public static final HeldDeliverySerializer INSTANCE = new HeldDeliverySerializer();

    private HeldDeliverySerializer() {
        super(Snapshot.class);
    }

    static final byte FORMAT = 1;

    @Override
    public HeldDelivery createInstance() {
        return null;
    }

    @Override
    public void serialize(HeldDelivery h, DataOutputView out) throws IOException {
        FormatByte.write(out, FORMAT);
        StringValue.writeString(h.messageId(), out);
        out.writeLong(h.timestamp());
        out.writeLong(h.sendAt());
        ByteArrays.write(h.key(), out);
        ByteArrays.write(h.value(), out);
        StringValue.writeString(h.segment(), out);
        out.writeLong(h.configVersion());
        StringValue.writeString(h.shadow(), out);
    }

    @Override
    public HeldDelivery deserialize(DataInputView in) throws IOException {
        FormatByte.read(in, "held message", FORMAT);
        return new HeldDelivery(
                StringValue.readString(in),
                in.readLong(),
                in.readLong(),
                ByteArrays.read(in),
                ByteArrays.read(in),
                StringValue.readString(in),
                in.readLong(),
                StringValue.readString(in));
    }

    public static final class Snapshot extends SimpleTypeSerializerSnapshot<HeldDelivery> {
        public Snapshot() {
            super(() -> INSTANCE);
        }
    }
}
