package io.freqcap.schema.common;

import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Variable-length integers (7 bits a byte, low first) and their zigzag form for signed values. */
public final class VarInts {
    private VarInts() {}

    public static void writeVarLong(DataOutputView out, long v) throws IOException {
        while ((v & ~0x7FL) != 0) {
            out.writeByte((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.writeByte((int) v);
    }

    /**
     * @throws IOException for more than 10 bytes (corrupt input)
     */
    public static long readVarLong(DataInputView in) throws IOException {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            byte b = in.readByte();
            v |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return v;
            }
        }
        throw new IOException("corrupt history: varint longer than 10 bytes");
    }

    public static void writeZigzag(DataOutputView out, int v) throws IOException {
        writeVarLong(out, ((long) v << 1) ^ (v >> 31));
    }

    public static int readZigzag(DataInputView in) throws IOException {
        long z = readVarLong(in);
        return (int) ((z >>> 1) ^ -(z & 1));
    }
}
