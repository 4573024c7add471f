package io.freqcap.schema.history;

import static io.freqcap.schema.common.VarInts.readVarLong;
import static io.freqcap.schema.common.VarInts.writeVarLong;

import io.freqcap.schema.common.Utf8Strings;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The layouts of a {@link UserHistory} in state ({@link UserHistorySerializer}), format version 1:
 *
 * <pre>
 * varint (n &lt;&lt; 3 | min(k, 7))               n entries, k channels
 * if k &gt;= 7: varint k
 * if n &gt; 0:
 *   k x (varint len, UTF-8 bytes)            channel table
 *   per entry: varlong timestamp (the first) or delta to the previous (sorted, so &gt;= 0),
 *              varint channel index (only when k &gt; 1),
 *              7 bytes fingerprint (56 bits, big-endian)
 * </pre>
 *
 * Deltas and varints keep a user with five messages in a week near 60 bytes. Every later format
 * reads every earlier one, and the snapshot names the newest written ({@link
 * HistoryFormatSnapshot}).
 *
 * <p>Entries with messageIds (kept while the Redis mirror is on) extend version 1 without changing
 * a byte of histories that have none: a history of n &gt; 0 entries always has k &gt;= 1 channels,
 * so a header with n &gt; 0 and k = 0 marks the extension. It is followed by varint k, the body
 * above, then per entry varint (id length + 1) and the UTF-8 bytes, 0 for no id.
 *
 * <p><b>Format version 2</b> adds what scoped and calendar limits read, for histories that have any
 * of it (a history without is written, byte for byte, as version 1, and version 1 is read as
 * always): the header with k = 0, then varint 0 (which version 1 never writes there), varint flags
 * (1: messageIds, 2: categories, 4: campaigns, 8: offsets), varint k, the channel table, then if
 * flagged a category table and a campaign table (varint count, then each as a channel is), the
 * entries of version 1 each followed, if flagged, by varint category index, varint (campaign index
 * + 1, 0 for none) and zigzag varint offset seconds; then the ids as above if flagged.
 *
 * <p>Flag 16 (<b>packed</b>, written whenever every offset is a whole number of quarter hours, as
 * every zone's has been since 1972) changes only the entries: varlong timestamp delta; varint
 * {@code channel + k × (category + categories × (campaign + 1 or 0))}, only when more than one
 * combination exists; the fingerprint; if offsets are flagged, the offset in quarter hours as a
 * zigzag varint delta to the previous entry's (the first to 0). Packed, the category table leaves
 * out the default category, which is index 0, as no campaign is for campaigns. Flag 32 (only with
 * 16): every entry has the same offset, written once after the tables (zigzag varint quarter hours)
 * instead of per entry. A user in one zone pays one byte per entry for channel, category and
 * campaign together, and one for the zone.
 *
 * <p><b>Format version 3</b> adds flag 64 (<b>held</b>), for histories with an entry counted at a
 * later send time than the timestamp it was stamped with: after everything above, per entry a
 * varlong of that difference in milliseconds (0 for entries not held). Histories without held
 * entries are written as before.
 *
 * <p>{@link HistoryWriter} writes them, {@link HistoryReader} reads them, {@link PackedEntries} is
 * the packed layout's entries: this class holds what both sides share.
 */
final class HistoryLayout {
    private HistoryLayout() {}

    // Version 2 flags.
    static final int IDS = 1;
    static final int CATEGORIES = 2;
    static final int CAMPAIGNS = 4;
    static final int OFFSETS = 8;
    static final int PACKED = 16;
    static final int ONE_OFFSET = 32;
    static final int HELD = 64;

    static final int QUARTER_HOUR = 900;
    static final long MAX_RADIX = 1L << 40;

    static void writeFingerprint(DataOutputView out, long fp) throws IOException {
        out.writeByte((int) (fp >>> 48));
        out.writeShort((int) (fp >>> 32));
        out.writeInt((int) fp);
    }

    static void writeStrings(DataOutputView out, String[] strings) throws IOException {
        for (String c : strings) {
            byte[] b = Utf8Strings.bytes(c);
            writeVarLong(out, b.length);
            out.write(b);
        }
    }

    static String[] readStrings(DataInputView in, int count, String what) throws IOException {
        String[] out = new String[count];
        for (int c = 0; c < count; c++) {
            long length = readVarLong(in);
            if (length < 0 || length > 10_000_000) { // the message is made only when it fails
                throw new IOException("corrupt history: " + what + " length " + length);
            }
            out[c] = Utf8Strings.read(in, (int) length);
        }
        return out;
    }

    static long readFingerprint(DataInputView in) throws IOException {
        return ((long) (in.readByte() & 0xFF) << 48)
                | ((long) (in.readShort() & 0xFFFF) << 32)
                | (in.readInt() & 0xFFFFFFFFL);
    }

    static String entry(String[] table, long index, String what) throws IOException {
        if (index < 0 || index >= table.length) {
            throw new IOException(
                    "corrupt history: " + what + " index " + index + " of " + table.length);
        }
        return table[(int) index];
    }

    static int checkedInt(long v, String what) throws IOException {
        if (v < 0 || v > 10_000_000) {
            throw new IOException("corrupt history: " + what + " " + v);
        }
        return (int) v;
    }
}
