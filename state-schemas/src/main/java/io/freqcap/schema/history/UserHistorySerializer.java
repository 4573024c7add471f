package io.freqcap.schema.history;

import io.freqcap.schema.common.Utf8Strings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The state serializer of {@link UserHistory}, format version 1:
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
 * <p>Why one long class: one format in its layouts (version 1, version 2, packed), written and read
 * side by side so that they cannot drift apart.
 */
public final class UserHistorySerializer extends TypeSerializerSingleton<UserHistory> {
    private static final long serialVersionUID = 1L;
    public static final UserHistorySerializer INSTANCE = new UserHistorySerializer();

    // Version 2 flags.
    private static final int IDS = 1;
    private static final int CATEGORIES = 2;
    private static final int CAMPAIGNS = 4;
    private static final int OFFSETS = 8;
    private static final int PACKED = 16;
    private static final int ONE_OFFSET = 32;
    private static final int HELD = 64;

    private static final int QUARTER_HOUR = 900;
    private static final long MAX_RADIX = 1L << 40;

    @Override
    public boolean isImmutableType() {
        return true;
    }

    @Override
    public UserHistory createInstance() {
        return UserHistory.EMPTY;
    }

    @Override
    public UserHistory copy(UserHistory from) {
        return from;
    }

    @Override
    public UserHistory copy(UserHistory from, UserHistory reuse) {
        return from;
    }

    @Override
    public int getLength() {
        return -1;
    }

    @Override
    public void serialize(UserHistory h, DataOutputView out) throws IOException {
        int n = h.size();
        String[] channels = h.channels;
        String[] ids = n == 0 ? null : h.messageIds;
        int[] categoryIndex = n == 0 ? null : h.categoryIndex;
        int[] campaignIndex = n == 0 ? null : h.campaignIndex;
        int[] offsets = n == 0 ? null : h.offsets;
        long[] heldFor = n == 0 ? null : h.heldFor;
        boolean v2 =
                categoryIndex != null
                        || campaignIndex != null
                        || offsets != null
                        || heldFor != null;
        // The history's own tables are the packed format's: no default category, first use first.
        String[] categoryTable = categoryIndex == null ? null : h.categoryTable;
        String[] campaignTable = campaignIndex == null ? null : h.campaignTable;
        boolean packed = v2 && packable(channels, categoryTable, campaignTable, offsets);
        String[] categories = null;
        String[] campaigns = null;
        if (v2 && !packed) {
            // Unpacked (offsets that are not quarter hours): per-entry strings, the category table
            // with the default in it.
            categories = categoryIndex == null ? null : categoriesOf(h);
            campaigns = Tabled.values(campaignTable, campaignIndex);
            categoryTable = categories == null ? null : table(categories, null);
            campaignTable = campaigns == null ? null : table(campaigns, null);
        }
        boolean oneOffset = packed && offsets != null && allEqual(offsets);
        if (v2) {
            writeVarLong(out, (long) n << 3);
            writeVarLong(out, 0);
            writeVarLong(
                    out,
                    (ids != null ? IDS : 0)
                            | (categoryIndex != null ? CATEGORIES : 0)
                            | (campaignIndex != null ? CAMPAIGNS : 0)
                            | (offsets != null ? OFFSETS : 0)
                            | (packed ? PACKED : 0)
                            | (oneOffset ? ONE_OFFSET : 0)
                            | (heldFor != null ? HELD : 0));
            writeVarLong(out, channels.length);
        } else if (ids != null) {
            writeVarLong(out, (long) n << 3);
            writeVarLong(out, channels.length);
        } else {
            // One header byte for the usual user: a few entries on fewer than 7 channels.
            writeVarLong(out, ((long) n << 3) | Math.min(channels.length, 7));
            if (channels.length >= 7) {
                writeVarLong(out, channels.length);
            }
        }
        if (n == 0) {
            return;
        }
        writeStrings(out, channels);
        if (categoryTable != null) {
            writeVarLong(out, categoryTable.length);
            writeStrings(out, categoryTable);
        }
        if (campaignTable != null) {
            writeVarLong(out, campaignTable.length);
            writeStrings(out, campaignTable);
        }
        if (oneOffset) {
            writeZigzag(out, offsets[0] / QUARTER_HOUR);
        }
        long[] ts = h.timestamps;
        long[] fps = h.fingerprints;
        int[] ci = h.channelIndex;
        if (packed) {
            writePackedEntries(
                    out,
                    ts,
                    fps,
                    ci,
                    channels.length,
                    categoryTable,
                    categoryIndex,
                    campaignTable,
                    campaignIndex,
                    oneOffset ? null : offsets);
        }
        long prev = 0;
        for (int i = 0; i < n && !packed; i++) {
            writeVarLong(out, ts[i] - prev);
            prev = ts[i];
            if (channels.length > 1) {
                writeVarLong(out, ci[i]);
            }
            writeFingerprint(out, fps[i]);
            if (categoryTable != null) {
                writeVarLong(out, indexOf(categoryTable, categories[i]));
            }
            if (campaignTable != null) {
                writeVarLong(
                        out, campaigns[i] == null ? 0 : indexOf(campaignTable, campaigns[i]) + 1);
            }
            if (offsets != null) {
                writeVarLong(out, (offsets[i] << 1) ^ (offsets[i] >> 31));
            }
        }
        if (ids != null) {
            for (String id : ids) {
                if (id == null) {
                    out.writeByte(0);
                } else {
                    byte[] b = id.getBytes(StandardCharsets.UTF_8);
                    writeVarLong(out, b.length + 1L);
                    out.write(b);
                }
            }
        }
        if (heldFor != null) {
            for (long d : heldFor) {
                writeVarLong(out, d);
            }
        }
    }

    private static String[] categoriesOf(UserHistory h) {
        String[] out = new String[h.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = h.category(i);
        }
        return out;
    }

    /**
     * Whether the entries can be packed: every offset a whole number of quarter hours (every zone's
     * since 1972) and the attribute radix small enough for a varint.
     */
    private static boolean packable(
            String[] channels, String[] categoryTable, String[] campaignTable, int[] offsets) {
        if (offsets != null) {
            for (int o : offsets) {
                if (o % QUARTER_HOUR != 0) {
                    return false;
                }
            }
        }
        long radix =
                (long) channels.length
                        * (categoryTable == null ? 1 : categoryTable.length + 1L)
                        * (campaignTable == null ? 1 : campaignTable.length + 1L);
        return radix <= MAX_RADIX;
    }

    private static boolean allEqual(int[] a) {
        for (int x : a) {
            if (x != a[0]) {
                return false;
            }
        }
        return true;
    }

    private static void writeZigzag(DataOutputView out, int v) throws IOException {
        writeVarLong(out, ((long) v << 1) ^ (v >> 31));
    }

    private static int readZigzag(DataInputView in) throws IOException {
        long z = readVarLong(in);
        return (int) ((z >>> 1) ^ -(z & 1));
    }

    /**
     * Packed entries (flag {@link #PACKED}): the timestamp delta; one varint for the channel,
     * category and campaign indexes in mixed radix, only when there is more than one combination;
     * the fingerprint; the offset in quarter hours as a zigzag delta to the previous entry's.
     */
    private static void writePackedEntries(
            DataOutputView out,
            long[] ts,
            long[] fps,
            int[] ci,
            int k,
            String[] categoryTable,
            int[] categoryIndex,
            String[] campaignTable,
            int[] campaignIndex,
            int[] offsets)
            throws IOException {
        long nCat = categoryTable == null ? 1 : categoryTable.length + 1L;
        long nCamp = campaignTable == null ? 1 : campaignTable.length + 1L;
        boolean attributes = k * nCat * nCamp > 1;
        long prev = 0;
        int prevQuarters = 0;
        for (int i = 0; i < ts.length; i++) {
            writeVarLong(out, ts[i] - prev);
            prev = ts[i];
            if (attributes) {
                long cat = categoryIndex == null ? 0 : categoryIndex[i];
                long camp = campaignIndex == null ? 0 : campaignIndex[i];
                writeVarLong(out, ci[i] + k * (cat + nCat * camp));
            }
            writeFingerprint(out, fps[i]);
            if (offsets != null) {
                int quarters = offsets[i] / QUARTER_HOUR;
                writeZigzag(out, quarters - prevQuarters);
                prevQuarters = quarters;
            }
        }
    }

    private static void writeFingerprint(DataOutputView out, long fp) throws IOException {
        out.writeByte((int) (fp >>> 48));
        out.writeShort((int) (fp >>> 32));
        out.writeInt((int) fp);
    }

    /**
     * The distinct non-null values but {@code leftOut}, in order of first appearance (few: no hash
     * set needed).
     */
    private static String[] table(String[] values, String leftOut) {
        String[] table = new String[values.length];
        int n = 0;
        next:
        for (String v : values) {
            if (v == null || v.equals(leftOut)) {
                continue;
            }
            for (int i = 0; i < n; i++) {
                if (table[i].equals(v)) {
                    continue next;
                }
            }
            table[n++] = v;
        }
        return java.util.Arrays.copyOf(table, n);
    }

    private static int indexOf(String[] table, String v) {
        for (int i = 0; i < table.length; i++) {
            if (table[i].equals(v)) {
                return i;
            }
        }
        throw new IllegalStateException("not in the table: " + v);
    }

    private static void writeStrings(DataOutputView out, String[] strings) throws IOException {
        for (String c : strings) {
            byte[] b = Utf8Strings.bytes(c);
            writeVarLong(out, b.length);
            out.write(b);
        }
    }

    private static String[] readStrings(DataInputView in, int count, String what)
            throws IOException {
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

    @Override
    public UserHistory deserialize(DataInputView in) throws IOException {
        long header = readVarLong(in);
        int n = checkedInt(header >>> 3, "entry count");
        int k = (int) (header & 7);
        if (n == 0) {
            if (k == 7) {
                readVarLong(in);
            }
            return UserHistory.EMPTY;
        }
        int flags = 0;
        if (k == 0) {
            k = checkedInt(readVarLong(in), "channel count");
            if (k == 0) { // version 2
                flags = checkedInt(readVarLong(in), "flags");
                if (flags > 127 || ((flags & ONE_OFFSET) != 0 && (flags & PACKED) == 0)) {
                    throw new IOException("corrupt history: flags " + flags);
                }
                k = checkedInt(readVarLong(in), "channel count");
            } else {
                flags = 1; // version 1 with messageIds
            }
        } else if (k == 7) {
            k = checkedInt(readVarLong(in), "channel count");
        }
        if (k == 0) {
            throw new IOException("corrupt history: " + n + " entries without a channel");
        }
        String[] channels = readStrings(in, k, "channel");
        String[] categoryTable =
                (flags & CATEGORIES) == 0
                        ? null
                        : readStrings(
                                in, checkedInt(readVarLong(in), "category count"), "category");
        String[] campaignTable =
                (flags & CAMPAIGNS) == 0
                        ? null
                        : readStrings(
                                in, checkedInt(readVarLong(in), "campaign count"), "campaign");
        long[] ts = new long[n];
        long[] fps = new long[n];
        int[] ci = new int[n];
        int[] offsets = (flags & OFFSETS) == 0 ? null : new int[n];
        if ((flags & ONE_OFFSET) != 0 && offsets != null) {
            java.util.Arrays.fill(offsets, readZigzag(in) * QUARTER_HOUR);
        }
        if ((flags & PACKED) != 0) {
            int[] categoryIndex = categoryTable == null ? null : new int[n];
            int[] campaignIndex = campaignTable == null ? null : new int[n];
            readPackedEntries(
                    in,
                    k,
                    ts,
                    fps,
                    ci,
                    categoryIndex,
                    categoryTable,
                    campaignIndex,
                    campaignTable,
                    (flags & ONE_OFFSET) != 0 ? null : offsets);
            return HistoryEdits.decoded(
                    ts,
                    fps,
                    ci,
                    channels,
                    readIds(in, flags, n),
                    categoryTable,
                    categoryIndex,
                    campaignTable,
                    campaignIndex,
                    offsets,
                    readHeld(in, flags, n));
        }
        String[] categories = categoryTable == null ? null : new String[n];
        String[] campaigns = campaignTable == null ? null : new String[n];
        long prev = 0;
        for (int i = 0; i < n; i++) {
            prev += readVarLong(in);
            ts[i] = prev;
            ci[i] = k > 1 ? checkedInt(readVarLong(in), "channel index") : 0;
            if (ci[i] >= k) {
                throw new IOException("corrupt history: channel index " + ci[i] + " of " + k);
            }
            fps[i] = readFingerprint(in);
            if (categories != null) {
                categories[i] = entry(categoryTable, readVarLong(in), "category");
            }
            if (campaigns != null) {
                long c = readVarLong(in);
                campaigns[i] = c == 0 ? null : entry(campaignTable, c - 1, "campaign");
            }
            if (offsets != null) {
                long z = readVarLong(in);
                offsets[i] = (int) ((z >>> 1) ^ -(z & 1));
            }
        }
        String[] ids = readIds(in, flags, n);
        return HistoryEdits.fromValues(
                ts, fps, ci, channels, ids, categories, campaigns, offsets, readHeld(in, flags, n));
    }

    private static long[] readHeld(DataInputView in, int flags, int n) throws IOException {
        if ((flags & HELD) == 0) {
            return null;
        }
        long[] held = new long[n];
        for (int i = 0; i < n; i++) {
            held[i] = readVarLong(in);
            if (held[i] < 0) {
                throw new IOException("corrupt history: held for " + held[i] + " ms");
            }
        }
        return held;
    }

    private static String[] readIds(DataInputView in, int flags, int n) throws IOException {
        if ((flags & IDS) == 0) {
            return null;
        }
        String[] ids = new String[n];
        for (int i = 0; i < n; i++) {
            int len = checkedInt(readVarLong(in), "messageId length");
            if (len > 0) {
                byte[] b = new byte[len - 1];
                in.readFully(b);
                ids[i] = new String(b, StandardCharsets.UTF_8);
            }
        }
        return ids;
    }

    private static void readPackedEntries(
            DataInputView in,
            int k,
            long[] ts,
            long[] fps,
            int[] ci,
            int[] categoryIndex,
            String[] categoryTable,
            int[] campaignIndex,
            String[] campaignTable,
            int[] offsets)
            throws IOException {
        long nCat = categoryTable == null ? 1 : categoryTable.length + 1L;
        long nCamp = campaignTable == null ? 1 : campaignTable.length + 1L;
        long radix;
        try {
            radix = Math.multiplyExact(Math.multiplyExact(k, nCat), nCamp);
        } catch (ArithmeticException e) {
            radix = Long.MAX_VALUE;
        }
        if (radix > MAX_RADIX) {
            throw new IOException("corrupt history: " + radix + " attribute combinations");
        }
        long prev = 0;
        int quarters = 0;
        for (int i = 0; i < ts.length; i++) {
            prev += readVarLong(in);
            ts[i] = prev;
            long a = radix > 1 ? readVarLong(in) : 0;
            if (a < 0 || a >= radix) {
                throw new IOException("corrupt history: entry attributes " + a + " of " + radix);
            }
            ci[i] = (int) (a % k);
            a /= k;
            if (categoryIndex != null) {
                categoryIndex[i] = (int) (a % nCat);
            }
            a /= nCat;
            if (campaignIndex != null) {
                campaignIndex[i] = (int) a;
            }
            fps[i] = readFingerprint(in);
            if (offsets != null) {
                quarters += readZigzag(in);
                offsets[i] = quarters * QUARTER_HOUR;
            }
        }
    }

    private static long readFingerprint(DataInputView in) throws IOException {
        return ((long) (in.readByte() & 0xFF) << 48)
                | ((long) (in.readShort() & 0xFFFF) << 32)
                | (in.readInt() & 0xFFFFFFFFL);
    }

    private static String entry(String[] table, long index, String what) throws IOException {
        if (index < 0 || index >= table.length) {
            throw new IOException(
                    "corrupt history: " + what + " index " + index + " of " + table.length);
        }
        return table[(int) index];
    }

    @Override
    public UserHistory deserialize(UserHistory reuse, DataInputView in) throws IOException {
        return deserialize(in);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
        serialize(deserialize(source), target);
    }

    @Override
    public TypeSerializerSnapshot<UserHistory> snapshotConfiguration() {
        return new Snapshot();
    }

    /** {@link HistoryFormatSnapshot}: the history format, for {@code UserHistory} state. */
    public static final class Snapshot extends HistoryFormatSnapshot<UserHistory> {
        @Override
        public TypeSerializer<UserHistory> restoreSerializer() {
            return INSTANCE;
        }
    }

    static void writeVarLong(DataOutputView out, long v) throws IOException {
        while ((v & ~0x7FL) != 0) {
            out.writeByte((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.writeByte((int) v);
    }

    static long readVarLong(DataInputView in) throws IOException {
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

    private static int checkedInt(long v, String what) throws IOException {
        if (v < 0 || v > 10_000_000) {
            throw new IOException("corrupt history: " + what + " " + v);
        }
        return (int) v;
    }
}
