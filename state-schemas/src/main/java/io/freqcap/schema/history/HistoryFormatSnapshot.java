package io.freqcap.schema.history;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The snapshot of a serializer that writes histories in {@link UserHistorySerializer}'s format
 * ({@link UserHistorySerializer} itself and {@link StoredHistorySerializer}): it names the newest
 * history format the serializer writes, 1 (the first format, with the messageId extension), 2
 * (format version 2, packed or not) or 3 (held entries). Both serializers read every format up to
 * their own (histories tell theirs apart by their header), so state of an older or equal format
 * restores as is, whichever of the two wrote it; a newer format (state of a later freqcap) is
 * incompatible, and Flink refuses the restore instead of a serializer misreading it.
 *
 * <p>Snapshot versions 2 and 3 are Flink's {@code SimpleTypeSerializerSnapshot}'s, which freqcap
 * used before its snapshots named a format: they restore as format 2, the newest freqcap had
 * written by then. Version 4 writes the format as an int.
 */
public abstract class HistoryFormatSnapshot<T> implements TypeSerializerSnapshot<T> {
    /** The history format freqcap writes. */
    public static final int FORMAT = 3;

    private static final int VERSION = 4;
    private static final int FORMAT_BEFORE_VERSION_4 = 2;

    private int format = FORMAT;

    /** The history format of the state this snapshot describes. */
    public int format() {
        return format;
    }

    @Override
    public int getCurrentVersion() {
        return VERSION;
    }

    @Override
    public void writeSnapshot(DataOutputView out) throws IOException {
        out.writeInt(format);
    }

    @Override
    public void readSnapshot(int readVersion, DataInputView in, ClassLoader classLoader)
            throws IOException {
        switch (readVersion) {
            case 2 -> in.readUTF(); // the serializer's class name, as Flink 1.x wrote it
            case 3 -> {}
            case VERSION -> {
                format = in.readInt();
                return;
            }
            default ->
                    throw new IOException(
                            "unknown history serializer snapshot version " + readVersion);
        }
        format = FORMAT_BEFORE_VERSION_4;
    }

    @Override
    public TypeSerializerSchemaCompatibility<T> resolveSchemaCompatibility(
            TypeSerializerSnapshot<T> old) {
        if ((Object) old instanceof HistoryFormatSnapshot<?> h && h.format <= FORMAT) {
            return TypeSerializerSchemaCompatibility.compatibleAsIs();
        }
        return TypeSerializerSchemaCompatibility.incompatible();
    }
}
