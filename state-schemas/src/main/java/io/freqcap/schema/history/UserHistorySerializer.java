package io.freqcap.schema.history;

import io.freqcap.schema.common.ImmutableSerializer;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The state serializer of {@link UserHistory}: the layouts of {@link HistoryLayout}, written by
 * {@link HistoryWriter} and read by {@link HistoryReader}. Every later format reads every earlier
 * one, and the snapshot names the newest written ({@link HistoryFormatSnapshot}).
 */
public final class UserHistorySerializer extends ImmutableSerializer<UserHistory> {
    private static final long serialVersionUID = 1L;
    public static final UserHistorySerializer INSTANCE = new UserHistorySerializer();

    private UserHistorySerializer() {
        super(Snapshot.class);
    }

    @Override
    public UserHistory createInstance() {
        return UserHistory.EMPTY;
    }

    @Override
    public void serialize(UserHistory h, DataOutputView out) throws IOException {
        HistoryWriter.write(h, out);
    }

    @Override
    public UserHistory deserialize(DataInputView in) throws IOException {
        return HistoryReader.read(in);
    }

    /** {@link HistoryFormatSnapshot}: the history format, for {@code UserHistory} state. */
    public static class Snapshot extends HistoryFormatSnapshot<UserHistory> {
        @Override
        public TypeSerializer<UserHistory> restoreSerializer() {
            return INSTANCE;
        }
    }
}
