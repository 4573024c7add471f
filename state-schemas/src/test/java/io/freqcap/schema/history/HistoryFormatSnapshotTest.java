package io.freqcap.schema.history;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/** The history serializers' snapshots name the history format, and restore what came before. */
class HistoryFormatSnapshotTest {
    static final ClassLoader LOADER = HistoryFormatSnapshotTest.class.getClassLoader();

    @Test
    void aSnapshotNamesTheFormatItsSerializerWrites() throws IOException {
        for (TypeSerializerSnapshot<?> written :
                new TypeSerializerSnapshot<?>[] {
                    UserHistorySerializer.INSTANCE.snapshotConfiguration(),
                    StoredHistorySerializer.INSTANCE.snapshotConfiguration()
                }) {
            DataOutputSerializer out = new DataOutputSerializer(64);
            TypeSerializerSnapshot.writeVersionedSnapshot(out, written);
            HistoryFormatSnapshot<?> read = read(out);
            assertEquals(written.getClass(), read.getClass());
            assertEquals(4, read.getCurrentVersion());
            assertEquals(3, read.format(), "format 3: held entries");
            assertEquals(HistoryFormatSnapshot.FORMAT, read.format());
        }
    }

    @Test
    void snapshotsFromBeforeTheFormatWasNamedRestoreAsTheFormatOfThatTime() throws IOException {
        // What freqcap 0.1 and 0.2 wrote: Flink's SimpleTypeSerializerSnapshot, version 3, no body.
        // ... under the class names of that time (io.freqcap.schema, before its packages).
        HistoryFormatSnapshot<?> old =
                read(legacy(io.freqcap.schema.UserHistorySerializer.Snapshot.class, 3));
        assertEquals(UserHistorySerializer.INSTANCE, old.restoreSerializer());
        assertEquals(2, old.format());
        assertTrue(
                new StoredHistorySerializer.Snapshot()
                        .resolveSchemaCompatibility(cast(old))
                        .isCompatibleAsIs(),
                "history-v1 written by UserHistorySerializer reads with StoredHistorySerializer");
        assertTrue(
                new UserHistorySerializer.Snapshot()
                        .resolveSchemaCompatibility(cast(old))
                        .isCompatibleAsIs());
        HistoryFormatSnapshot<?> stored =
                read(legacy(io.freqcap.schema.StoredHistorySerializer.Snapshot.class, 3));
        assertEquals(2, stored.format());
        assertEquals(StoredHistorySerializer.INSTANCE, stored.restoreSerializer());
        assertEquals(2, read(legacy(StoredHistorySerializer.Snapshot.class, 3)).format());
    }

    @Test
    void aNewerFormatIsRefusedNotMisread() throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        out.writeUTF(StoredHistorySerializer.Snapshot.class.getName());
        out.writeInt(4);
        out.writeInt(HistoryFormatSnapshot.FORMAT + 1);
        HistoryFormatSnapshot<?> later = read(out);
        assertTrue(
                new StoredHistorySerializer.Snapshot()
                        .resolveSchemaCompatibility(cast(later))
                        .isIncompatible());
    }

    @Test
    void anUnknownSnapshotVersionIsAnError() {
        DataOutputSerializer out = legacy(UserHistorySerializer.Snapshot.class, 9);
        IOException e = assertThrows(IOException.class, () -> read(out));
        assertTrue(e.getMessage().contains("version 9"), e.getMessage());
    }

    private static DataOutputSerializer legacy(Class<?> snapshot, int version) {
        try {
            DataOutputSerializer out = new DataOutputSerializer(64);
            out.writeUTF(snapshot.getName());
            out.writeInt(version);
            return out;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static HistoryFormatSnapshot<?> read(DataOutputSerializer out) throws IOException {
        return (HistoryFormatSnapshot<?>)
                TypeSerializerSnapshot.readVersionedSnapshot(
                        new DataInputDeserializer(out.getCopyOfBuffer()), LOADER);
    }

    @SuppressWarnings("unchecked")
    private static <T> TypeSerializerSnapshot<T> cast(HistoryFormatSnapshot<?> s) {
        return (TypeSerializerSnapshot<T>) s;
    }
}
