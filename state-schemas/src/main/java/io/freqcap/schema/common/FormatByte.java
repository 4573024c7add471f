package io.freqcap.schema.common;

import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The one way freqcap versions a value's layout in state: a leading format byte, so that a later
 * version reads what an earlier one wrote and an unknown format is refused, never misread. (Where
 * the layout predates this, the serializer's snapshot names the format instead: see {@code
 * HistoryFormatSnapshot}.)
 */
public final class FormatByte {
    private FormatByte() {}

    public static void write(DataOutputView out, int format) throws IOException {
        out.writeByte(format);
    }

    /**
     * Reads the format byte of a value of {@code what}.
     *
     * @param newest the newest format this version writes; formats 1 to it are read
     * @throws IOException for a format this version does not know
     */
    public static int read(DataInputView in, String what, int newest) throws IOException {
        int format = in.readByte();
        if (format < 1 || format > newest) {
            throw new IOException(
                    what
                            + " in format "
                            + format
                            + ", which this version of freqcap does not know (it writes "
                            + newest
                            + ")");
        }
        return format;
    }
}
