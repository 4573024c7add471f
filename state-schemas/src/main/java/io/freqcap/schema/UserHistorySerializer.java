package io.freqcap.schema;

import io.freqcap.schema.history.HistoryFormatSnapshot;
import io.freqcap.schema.history.UserHistory;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * Where the history serializer lived before the schema's packages (freqcap 0.1 and 0.2): state they
 * wrote names this class's {@link Snapshot}, so it stays, to restore that state with {@link
 * io.freqcap.schema.history.UserHistorySerializer}. Nothing else uses it.
 */
public final class UserHistorySerializer {
    private UserHistorySerializer() {}

    /** The snapshot name in freqcap 0.1 and 0.2 state: restores as the history serializer. */
    public static final class Snapshot extends HistoryFormatSnapshot<UserHistory> {
        @Override
        public TypeSerializer<UserHistory> restoreSerializer() {
            return io.freqcap.schema.history.UserHistorySerializer.INSTANCE;
        }
    }
}
