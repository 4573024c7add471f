package io.freqcap.schema;

import io.freqcap.schema.history.HistoryFormatSnapshot;
import io.freqcap.schema.history.StoredHistory;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * Where the stored-history serializer lived before the schema's packages: state of that time names
 * this class's {@link Snapshot}, so it stays, to restore that state with {@link
 * io.freqcap.schema.history.StoredHistorySerializer}. Nothing else uses it.
 */
public final class StoredHistorySerializer {
    private StoredHistorySerializer() {}

    /** The snapshot name in state written before the move: restores as the serializer. */
    public static final class Snapshot extends HistoryFormatSnapshot<StoredHistory> {
        @Override
        public TypeSerializer<StoredHistory> restoreSerializer() {
            return io.freqcap.schema.history.StoredHistorySerializer.INSTANCE;
        }
    }
}
