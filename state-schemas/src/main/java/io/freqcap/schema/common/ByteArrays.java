package io.freqcap.schema.common;

import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Byte arrays, null included, in the serializers' coding: a length (-1 for null), the bytes. */
public final class ByteArrays {
    private ByteArrays() {}

    public static void write(byte[] b, DataOutputView out) throws IOException {
        if (b == null) {
            out.writeInt(-1);
        } else {
            out.writeInt(b.length);
            out.write(b);
        }
    }

    public static byte[] read(DataInputView in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }
}
