package io.freqcap.schema.lifetime;

import static io.freqcap.schema.common.VarInts.readVarLong;
import static io.freqcap.schema.common.VarInts.writeVarLong;

import io.freqcap.schema.common.ImmutableSerializer;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A {@link LifetimeCount} as two varints, the count and the latest send time: 7 bytes for a count
 * below 128 and a send time of this century, so that state per user and campaign stays small. A
 * later format needs a new state name.
 */
public final class LifetimeCountSerializer extends ImmutableSerializer<LifetimeCount> {
    private static final long serialVersionUID = 1L;
    public static final LifetimeCountSerializer INSTANCE = new LifetimeCountSerializer();

    private LifetimeCountSerializer() {
        super(Snapshot.class);
    }

    @Override
    public LifetimeCount createInstance() {
        return new LifetimeCount(0, 0);
    }

    @Override
    public void serialize(LifetimeCount c, DataOutputView out) throws IOException {
        writeVarLong(out, c.count());
        writeVarLong(out, c.latest());
    }

    @Override
    public LifetimeCount deserialize(DataInputView in) throws IOException {
        long count = readVarLong(in);
        long latest = readVarLong(in);
        if (count < 0 || latest < 0) {
            throw new IOException("corrupt lifetime count: " + count + " at " + latest);
        }
        return new LifetimeCount(count, latest);
    }

    public static final class Snapshot extends SimpleTypeSerializerSnapshot<LifetimeCount> {
        public Snapshot() {
            super(() -> INSTANCE);
        }
    }
}
