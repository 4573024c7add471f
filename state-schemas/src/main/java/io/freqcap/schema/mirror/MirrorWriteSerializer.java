package io.freqcap.schema.mirror;

import java.io.IOException;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * The Redis mirror's backlog in checkpoints: writes Redis had not acknowledged. Version 4 (layout
 * 2, contract v6):
 *
 * <pre>
 * long userId, int length (-1: a deletion), length x byte log, long expireAt, int entries,
 * long deletion, int k, k x UTF legacy channel
 * </pre>
 *
 * Versions 1 to 3 were writes of layout 1 (members added to or removed from sorted sets). They
 * cannot be said in layout 2 without the user's history, so they restore as {@link #LEGACY}: the
 * writer drops them and its capping task rebuilds every user's key from state once Redis answers,
 * which writes what they would have (contract.md §7, the upgrade).
 */
public final class MirrorWriteSerializer implements SimpleVersionedSerializer<MirrorWrite> {
    public static final MirrorWriteSerializer INSTANCE = new MirrorWriteSerializer();

    /** A write of an earlier layout, restored: stands for "rebuild the mirror". */
    public static final MirrorWrite LEGACY = MirrorWrite.deletion(-1, Long.MIN_VALUE);

    @Override
    public int getVersion() {
        return 4;
    }

    @Override
    public byte[] serialize(MirrorWrite w) throws IOException {
        DataOutputSerializer out =
                new DataOutputSerializer(48 + (w.log() == null ? 0 : w.log().length));
        out.writeLong(w.userId());
        if (w.log() == null) {
            out.writeInt(-1);
        } else {
            out.writeInt(w.log().length);
            out.write(w.log());
        }
        out.writeLong(w.expireAt());
        out.writeInt(w.entries());
        out.writeLong(w.deletion());
        out.writeInt(w.legacyChannels().length);
        for (String c : w.legacyChannels()) {
            out.writeUTF(c);
        }
        return out.getCopyOfBuffer();
    }

    @Override
    public MirrorWrite deserialize(int version, byte[] bytes) throws IOException {
        if (version >= 1 && version <= 3) {
            return LEGACY;
        }
        if (version != 4) {
            throw new IOException("unknown mirror backlog format version " + version);
        }
        try {
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            long user = in.readLong();
            int length = in.readInt();
            if (length < -1 || length > bytes.length) {
                throw new IOException("corrupt mirror backlog entry: length " + length);
            }
            byte[] log = null;
            if (length >= 0) {
                log = new byte[length];
                in.readFully(log);
            }
            long expireAt = in.readLong();
            int entries = in.readInt();
            long deletion = in.readLong();
            int k = in.readInt();
            if (k < 0 || k > bytes.length) {
                throw new IOException("corrupt mirror backlog entry: count " + k);
            }
            String[] legacy = new String[k];
            for (int i = 0; i < k; i++) {
                legacy[i] = in.readUTF();
            }
            return new MirrorWrite(user, log, expireAt, entries, deletion, legacy);
        } catch (java.io.EOFException e) {
            throw new IOException("corrupt mirror backlog entry: truncated", e);
        } catch (IllegalArgumentException e) {
            throw new IOException("corrupt mirror backlog entry: " + e.getMessage(), e);
        }
    }
}
