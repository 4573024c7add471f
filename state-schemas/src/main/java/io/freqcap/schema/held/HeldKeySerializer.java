package io.freqcap.schema.held;

import io.freqcap.schema.common.ImmutableSerializer;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A {@link HeldKey} as 16 bytes: the send time and the fingerprint, big-endian. Both are never
 * negative, so RocksDB's byte order is send-time order. Fixed-length: a later format would need a
 * new state name, which is how a map key's layout changes in Flink anyway.
 */
public final class HeldKeySerializer extends ImmutableSerializer<HeldKey> {
    private static final long serialVersionUID = 1L;
    public static final HeldKeySerializer INSTANCE = new HeldKeySerializer();

    private HeldKeySerializer() {
        super(Snapshot.class);
    }

    @Override
    public HeldKey createInstance() {
        return new HeldKey(0, 0);
    }

    @Override
    public int getLength() {
        return 16;
    }

    @Override
    public void serialize(HeldKey k, DataOutputView out) throws IOException {
        out.writeLong(k.sendAt());
        out.writeLong(k.fingerprint());
    }

    @Override
    public HeldKey deserialize(DataInputView in) throws IOException {
        long sendAt = in.readLong();
        long fingerprint = in.readLong();
        if (sendAt < 0) {
            throw new IOException("corrupt held-message key: send time " + sendAt);
        }
        return new HeldKey(sendAt, fingerprint);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
        target.write(source, 16);
    }

    public static final class Snapshot extends SimpleTypeSerializerSnapshot<HeldKey> {
        public Snapshot() {
            super(() -> INSTANCE);
        }
    }
}
