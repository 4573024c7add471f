package io.freqcap.schema;

/**
 * Where the history serializer lived before the schema's packages (freqcap 0.1 and 0.2): state they
 * wrote names this class's {@link Snapshot}, so it stays, to restore that state with {@link
 * io.freqcap.schema.history.UserHistorySerializer}. Nothing else uses it.
 */
public final class UserHistorySerializer {
    private UserHistorySerializer() {}

    /** The snapshot name in freqcap 0.1 and 0.2 state: restores as the history serializer. */
    public static final class Snapshot
            extends io.freqcap.schema.history.UserHistorySerializer.Snapshot {}
}
