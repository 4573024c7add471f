package io.freqcap.schema.mirror;

import java.io.IOException;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * The Redis mirror's backlog in checkpoints: writes Redis had not acknowledged. Version 3:
 *
 * <pre>
 * long userId, long windowMillis, byte kind (0 add, 1 replace, 2 remove), long latestStamped,
 * int k, k x UTF channel, int n, n x (int channel index, long timestamp, UTF messageId),
 * long highestScore
 * </pre>
 *
 * Version 2 (every release after 0.3 until the mirror sent plain commands) had no highestScore:
 * such a write does not know it, and Redis reads it ({@link MirrorWrite#UNKNOWN_SCORE}). Version 1
 * (freqcap 0.3) had a boolean replace where the kind is and no latestStamped: such a write trims
 * from its latest entry, as it did then.
 */
public final class MirrorWriteSerializer implements SimpleVersionedSerializer<MirrorWrite> {
    public static final MirrorWriteSerializer INSTANCE = new MirrorWriteSerializer();

    @Override
    public int getVersion() {
        return 3;
    }

    @Override
    public byte[] serialize(MirrorWrite w) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        out.writeLong(w.userId());
        out.writeLong(w.windowMillis());
        out.writeByte(w.kind().ordinal());
        out.writeLong(w.latestStamped());
        out.writeInt(w.channels().length);
        for (String c : w.channels()) {
            out.writeUTF(c);
        }
        out.writeInt(w.size());
        for (int i = 0; i < w.size(); i++) {
            out.writeInt(w.channelOf()[i]);
            out.writeLong(w.timestamps()[i]);
            out.writeUTF(w.messageIds()[i]);
        }
        out.writeLong(w.highestScore());
        return out.getCopyOfBuffer();
    }

    @Override
    public MirrorWrite deserialize(int version, byte[] bytes) throws IOException {
        if (version < 1 || version > 3) {
            throw new IOException("unknown mirror backlog format version " + version);
        }
        try {
            return read(new DataInputDeserializer(bytes), version);
        } catch (java.io.EOFException e) {
            throw new IOException("corrupt mirror backlog entry: truncated", e);
        }
    }

    private static MirrorWrite read(DataInputDeserializer in, int version) throws IOException {
        long user = in.readLong();
        long window = in.readLong();
        MirrorWrite.Kind kind;
        long latestStamped = MirrorWrite.NO_TRIM;
        if (version == 1) {
            kind = in.readBoolean() ? MirrorWrite.Kind.REPLACE : MirrorWrite.Kind.ADD;
        } else {
            int k = in.readByte();
            if (k < 0 || k >= MirrorWrite.Kind.values().length) {
                throw new IOException("corrupt mirror backlog entry: kind " + k);
            }
            kind = MirrorWrite.Kind.values()[k];
            latestStamped = in.readLong();
        }
        String[] channels = new String[count(in.readInt())];
        for (int i = 0; i < channels.length; i++) {
            channels[i] = in.readUTF();
        }
        int n = count(in.readInt());
        int[] channelOf = new int[n];
        long[] ts = new long[n];
        String[] ids = new String[n];
        for (int i = 0; i < n; i++) {
            channelOf[i] = in.readInt();
            ts[i] = in.readLong();
            ids[i] = in.readUTF();
        }
        long highest = version >= 3 ? in.readLong() : MirrorWrite.UNKNOWN_SCORE;
        try {
            if (version == 1) {
                return new MirrorWrite(
                        user,
                        window,
                        kind == MirrorWrite.Kind.REPLACE,
                        channels,
                        channelOf,
                        ts,
                        ids);
            }
            return new MirrorWrite(
                    user, window, kind, latestStamped, channels, channelOf, ts, ids, highest);
        } catch (IllegalArgumentException e) {
            throw new IOException("corrupt mirror backlog entry: " + e.getMessage(), e);
        }
    }

    private static int count(int n) throws IOException {
        if (n < 0 || n > 10_000_000) {
            throw new IOException("corrupt mirror backlog entry: count " + n);
        }
        return n;
    }
}
