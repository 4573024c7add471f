package io.freqcap.schema.history;

import static io.freqcap.schema.common.VarInts.readVarLong;
import static io.freqcap.schema.common.VarInts.readZigzag;
import static io.freqcap.schema.common.VarInts.writeVarLong;
import static io.freqcap.schema.common.VarInts.writeZigzag;
import static io.freqcap.schema.history.HistoryLayout.MAX_RADIX;
import static io.freqcap.schema.history.HistoryLayout.QUARTER_HOUR;
import static io.freqcap.schema.history.HistoryLayout.readFingerprint;
import static io.freqcap.schema.history.HistoryLayout.writeFingerprint;

import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The entries of the packed layout (flag {@link HistoryLayout#PACKED}): the timestamp delta; one
 * varint for the channel, category and campaign indexes in mixed radix, only when there is more
 * than one combination; the fingerprint; the offset in quarter hours as a zigzag delta to the
 * previous entry's.
 */
final class PackedEntries {
    private PackedEntries() {}

    /**
     * Whether the entries can be packed: every offset a whole number of quarter hours (every zone's
     * since 1972) and the attribute radix small enough for a varint.
     */
    static boolean packable(
            String[] channels, String[] categoryTable, String[] campaignTable, int[] offsets) {
        if (offsets != null) {
            for (int o : offsets) {
                if (o % QUARTER_HOUR != 0) {
                    return false;
                }
            }
        }
        long radix = (long) channels.length * values(categoryTable) * values(campaignTable);
        return radix <= MAX_RADIX;
    }

    static boolean allEqual(int[] a) {
        for (int x : a) {
            if (x != a[0]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Packed entries (flag {@link HistoryLayout#PACKED}): the timestamp delta; one varint for the
     * channel, category and campaign indexes in mixed radix, only when there is more than one
     * combination; the fingerprint; the offset in quarter hours as a zigzag delta to the previous
     * entry's.
     */
    static void write(DataOutputView out, HistoryColumns h, int[] offsets) throws IOException {
        long[] ts = h.timestamps;
        long[] fps = h.fingerprints;
        int[] ci = h.channelIndex;
        int k = h.channels.length;
        String[] categoryTable = h.categoryTable;
        int[] categoryIndex = h.categoryIndex;
        String[] campaignTable = h.campaignTable;
        int[] campaignIndex = h.campaignIndex;
        long nCat = values(categoryTable);
        boolean attributes = k * nCat * values(campaignTable) > 1;
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

    /**
     * Reads the entries into the arrays of {@code p}, which hold one slot per entry (the category
     * and campaign indexes only where the tables are not null).
     */
    static void read(DataInputView in, HistoryColumns.Parts p, int[] offsets) throws IOException {
        long[] ts = p.timestamps;
        long[] fps = p.fingerprints;
        int[] ci = p.channelIndex;
        int k = p.channels.length;
        String[] categoryTable = p.categories.table();
        int[] categoryIndex = p.categories.index();
        String[] campaignTable = p.campaigns.table();
        int[] campaignIndex = p.campaigns.index();
        long radix = checkedRadix(k, categoryTable, campaignTable);
        long nCat = values(categoryTable);
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

    /** How many index values a table's entries take: none (0) and one for each value. */
    private static long values(String[] table) {
        return table == null ? 1 : table.length + 1L;
    }

    /** The mixed radix of the packed attributes, checked against corrupt input. */
    private static long checkedRadix(int k, String[] categoryTable, String[] campaignTable)
            throws IOException {
        long radix;
        try {
            radix =
                    Math.multiplyExact(
                            Math.multiplyExact(k, values(categoryTable)), values(campaignTable));
        } catch (ArithmeticException e) {
            radix = Long.MAX_VALUE;
        }
        if (radix > MAX_RADIX) {
            throw new IOException("corrupt history: " + radix + " attribute combinations");
        }
        return radix;
    }
}
