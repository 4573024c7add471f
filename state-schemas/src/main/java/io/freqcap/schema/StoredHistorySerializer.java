package io.freqcap.schema;

/**
 * Where the stored-history serializer lived before the schema's packages: state of that time names
 * this class's {@link Snapshot}, so it stays, to restore that state with {@link
 * io.freqcap.schema.history.StoredHistorySerializer}. Nothing else uses it.
 */
public final class StoredHistorySerializer {
    private StoredHistorySerializer() {}

    /** The snapshot name in state written before the move: restores as the serializer. */
    public static final class Snapshot
            extends io.freqcap.schema.history.StoredHistorySerializer.Snapshot {}
}
