package io.freqcap.schema.common;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A serializer of an immutable type with one instance: a copy is the value itself, and a value is
 * copied between views by reading and writing it. Subclasses write and read values and name their
 * snapshot; how they version their format is theirs to say (a {@link FormatByte}, or the snapshot).
 */
public abstract class ImmutableSerializer<T> extends TypeSerializerSingleton<T> {
    private static final long serialVersionUID = 1L;

    private final Class<? extends TypeSerializerSnapshot<T>> snapshot;

    /**
     * @param snapshot the serializer's snapshot class (public, with a public no-argument
     *     constructor, as Flink restores it by name)
     */
    protected ImmutableSerializer(Class<? extends TypeSerializerSnapshot<T>> snapshot) {
        this.snapshot = snapshot;
    }

    @Override
    public final TypeSerializerSnapshot<T> snapshotConfiguration() {
        try {
            return snapshot.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot make a " + snapshot.getName(), e);
        }
    }

    @Override
    public final boolean isImmutableType() {
        return true;
    }

    @Override
    public final T copy(T from) {
        return from;
    }

    @Override
    public final T copy(T from, T reuse) {
        return from;
    }

    /** Variable length; a fixed-length type says its length. */
    @Override
    public int getLength() {
        return -1;
    }

    @Override
    public final T deserialize(T reuse, DataInputView in) throws IOException {
        return deserialize(in);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
        serialize(deserialize(source), target);
    }
}
