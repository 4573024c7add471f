package io.freqcap.schema.history;

import io.freqcap.schema.common.ImmutableSerializer;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The state serializer of {@link StoredHistory}: {@link UserHistorySerializer}'s format, unchanged
 * (an {@link EncodedHistory} is written as the bytes it holds), so state written by {@link
 * UserHistorySerializer} before this serializer existed restores as it is, and the other way round.
 * Reads always decode.
 */
public final class StoredHistorySerializer extends ImmutableSerializer<StoredHistory> {
    private static final long serialVersionUID = 1L;
    public static final StoredHistorySerializer INSTANCE = new StoredHistorySerializer();

    private StoredHistorySerializer() {
        super(Snapshot.class);
    }

    /** The history {@code stored} holds, decoded; null for null. */
    public static UserHistory decoded(StoredHistory stored) {
        if (stored instanceof EncodedHistory e) {
            return e.decoded();
        }
        return (UserHistory) stored;
    }

    @Override
    public StoredHistory createInstance() {
        return UserHistory.EMPTY;
    }

    @Override
    public void serialize(StoredHistory h, DataOutputView out) throws IOException {
        if (h instanceof EncodedHistory e) {
            e.writeTo(out);
        } else {
            UserHistorySerializer.INSTANCE.serialize((UserHistory) h, out);
        }
    }

    @Override
    public StoredHistory deserialize(DataInputView in) throws IOException {
        return UserHistorySerializer.INSTANCE.deserialize(in);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
        UserHistorySerializer.INSTANCE.copy(source, target);
    }

    /**
     * {@link HistoryFormatSnapshot}: the history format, for {@code StoredHistory} state. Also
     * restores state {@link UserHistorySerializer} wrote (freqcap 0.1 and 0.2 named it for {@code
     * history-v1}): the same bytes.
     */
    public static class Snapshot extends HistoryFormatSnapshot<StoredHistory> {
        @Override
        public TypeSerializer<StoredHistory> restoreSerializer() {
            return INSTANCE;
        }
    }
}
