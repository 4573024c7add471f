package io.freqcap.schema.history;

import static io.freqcap.schema.common.VarInts.writeVarLong;
import static io.freqcap.schema.common.VarInts.writeZigzag;
import static io.freqcap.schema.history.HistoryLayout.CAMPAIGNS;
import static io.freqcap.schema.history.HistoryLayout.CATEGORIES;
import static io.freqcap.schema.history.HistoryLayout.HELD;
import static io.freqcap.schema.history.HistoryLayout.IDS;
import static io.freqcap.schema.history.HistoryLayout.OFFSETS;
import static io.freqcap.schema.history.HistoryLayout.ONE_OFFSET;
import static io.freqcap.schema.history.HistoryLayout.PACKED;
import static io.freqcap.schema.history.HistoryLayout.QUARTER_HOUR;
import static io.freqcap.schema.history.HistoryLayout.writeFingerprint;
import static io.freqcap.schema.history.HistoryLayout.writeStrings;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.core.memory.DataOutputView;

/** Writes a {@link UserHistory} in the oldest layout that holds it ({@link HistoryLayout}). */
final class HistoryWriter {
    private HistoryWriter() {}

    static void write(UserHistory history, DataOutputView out) throws IOException {
        HistoryColumns h = history;
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
        boolean packed =
                v2 && PackedEntries.packable(channels, categoryTable, campaignTable, offsets);
        String[] categories = null;
        String[] campaigns = null;
        if (v2 && !packed) {
            // Unpacked (offsets that are not quarter hours): per-entry strings, the category table
            // with the default in it.
            categories = categoryIndex == null ? null : categoriesOf(history);
            campaigns = Tabled.values(campaignTable, campaignIndex);
            categoryTable = categories == null ? null : table(categories, null);
            campaignTable = campaigns == null ? null : table(campaigns, null);
        }
        boolean oneOffset = packed && offsets != null && PackedEntries.allEqual(offsets);
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
            PackedEntries.write(out, h, oneOffset ? null : offsets);
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
}
