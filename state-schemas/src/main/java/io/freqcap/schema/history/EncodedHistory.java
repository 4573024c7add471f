package io.freqcap.schema.history;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A history as {@link UserHistorySerializer} wrote it, kept as those bytes (a copy: the caller's
 * buffer may be reused). Immutable. Equal to another with the same bytes; an encoded history and a
 * {@link UserHistory} are never equal, so compare {@link #decoded} forms.
 */
public final class EncodedHistory implements StoredHistory {
    private final byte[] bytes;

    private EncodedHistory(byte[] bytes) {
        this.bytes = bytes;
    }

    /**
     * A copy of {@code length} bytes of {@code serialized} from {@code offset}, which must be a
     * whole history as {@link UserHistorySerializer} writes one.
     */
    public static EncodedHistory copyOf(byte[] serialized, int offset, int length) {
        if (length <= 0) {
            throw new IllegalArgumentException("a serialized history has bytes, got " + length);
        }
        return new EncodedHistory(Arrays.copyOfRange(serialized, offset, offset + length));
    }

    /** Decodes the bytes (each call: they are decoded only where state lives on the heap). */
    public UserHistory decoded() {
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        try {
            UserHistory h = UserHistorySerializer.INSTANCE.deserialize(in);
            if (in.available() != 0) {
                throw new IOException(in.available() + " bytes after a history");
            }
            return h;
        } catch (IOException e) {
            throw new UncheckedIOException("corrupt encoded history", e);
        }
    }

    void writeTo(DataOutputView out) throws IOException {
        out.write(bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EncodedHistory that && Arrays.equals(bytes, that.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return "EncodedHistory[" + bytes.length + " bytes]";
    }
}
