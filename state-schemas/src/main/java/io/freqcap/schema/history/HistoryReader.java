package io.freqcap.schema.history;

import static io.freqcap.schema.common.VarInts.readVarLong;
import static io.freqcap.schema.common.VarInts.readZigzag;
import static io.freqcap.schema.history.HistoryLayout.CAMPAIGNS;
import static io.freqcap.schema.history.HistoryLayout.CATEGORIES;
import static io.freqcap.schema.history.HistoryLayout.HELD;
import static io.freqcap.schema.history.HistoryLayout.IDS;
import static io.freqcap.schema.history.HistoryLayout.OFFSETS;
import static io.freqcap.schema.history.HistoryLayout.ONE_OFFSET;
import static io.freqcap.schema.history.HistoryLayout.PACKED;
import static io.freqcap.schema.history.HistoryLayout.QUARTER_HOUR;
import static io.freqcap.schema.history.HistoryLayout.checkedInt;
import static io.freqcap.schema.history.HistoryLayout.entry;
import static io.freqcap.schema.history.HistoryLayout.readFingerprint;
import static io.freqcap.schema.history.HistoryLayout.readStrings;

import io.freqcap.schema.message.OutboundMessage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.core.memory.DataInputView;

/**
 * Reads a {@link UserHistory} in any layout ({@link HistoryLayout}), telling them apart by the
 * header; corrupt input is an {@link IOException}, never a history that is not one.
 */
final class HistoryReader {
    private HistoryReader() {}

    static UserHistory read(DataInputView in) throws IOException {
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
            HistoryColumns.Parts parts =
                    new HistoryColumns.Parts(ts, fps, ci, channels)
                            .categories(new Tabled(categoryTable, categoryIndex))
                            .campaigns(new Tabled(campaignTable, campaignIndex))
                            .offsets(offsets);
            PackedEntries.read(in, parts, (flags & ONE_OFFSET) != 0 ? null : offsets);
            return new UserHistory(
                    ColumnEdits.canonical(
                            parts.ids(readIds(in, flags, n))
                                    .heldFor(readHeld(in, flags, n))
                                    .columns()));
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
        // As written: every channel of the table is used, so nothing to compact.
        Tabled cats = Tabled.of(categories, OutboundMessage.DEFAULT_CATEGORY);
        String[] ids = readIds(in, flags, n);
        return new UserHistory(
                new HistoryColumns.Parts(ts, fps, ci, channels)
                        .ids(ids)
                        .categories(cats)
                        .campaigns(Tabled.of(campaigns, null))
                        .offsets(offsets)
                        .heldFor(readHeld(in, flags, n))
                        .columns());
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
}
