package io.freqcap.operators.capping.rule;

import io.freqcap.schema.history.CountedHistory;
import java.util.Arrays;
import java.util.HashMap;

/**
 * A history's entries with a campaign, as {@link DistinctCampaigns} reads them: in timestamp order,
 * each campaign numbered 0 .. {@link #campaigns} - 1 in order of first appearance. Read once per
 * decision; its arrays are shared with the limits' scans, which never change them.
 */
final class CampaignEntries {
    /** Up to this many campaigns are looked up by a scan; a user with more gets a map. */
    private static final int SCANNED = 8;

    long[] ts;
    int[] offsets;
    int[] ids;
    int n;
    int campaigns;
    private String[] names = new String[4];
    private HashMap<String, Integer> byName;

    /** Each entry's period label by period (day, week, month), as {@link PeriodCampaigns} asks. */
    final long[][] labels = new long[3][];

    CampaignEntries(CountedHistory history) {
        // As many as the history holds (it is read whole anyway): growing the arrays as the entries
        // came took a tenth of a heavy user's decision.
        int size = Math.max(1, history.size());
        ts = new long[size];
        offsets = new int[size];
        ids = new int[size];
        history.forEachCampaign(Long.MIN_VALUE, Long.MAX_VALUE, this::add);
    }

    /** The campaign's number; {@link #campaigns} (no entry's) when no entry has it. */
    int numberOf(String campaign) {
        int id = idOf(campaign);
        return id < 0 ? campaigns : id;
    }

    private void add(long timestamp, int offsetSeconds, String campaign) {
        if (n == ts.length) {
            ts = Arrays.copyOf(ts, n * 2);
            offsets = Arrays.copyOf(offsets, n * 2);
            ids = Arrays.copyOf(ids, n * 2);
        }
        int id = idOf(campaign);
        if (id < 0) {
            id = newId(campaign);
        }
        ts[n] = timestamp;
        offsets[n] = offsetSeconds;
        ids[n++] = id;
    }

    /** The campaign's number, or -1 when no entry read so far has it. */
    private int idOf(String campaign) {
        if (byName != null) {
            Integer id = byName.get(campaign);
            return id == null ? -1 : id;
        }
        // Latest first: a user's entries come in runs of one campaign. A history shares one String
        // per campaign among its entries, so equals mostly answers on identity.
        for (int c = campaigns - 1; c >= 0; c--) {
            if (names[c].equals(campaign)) {
                return c;
            }
        }
        return -1;
    }

    private int newId(String campaign) {
        if (campaigns == names.length) {
            names = Arrays.copyOf(names, campaigns * 2);
        }
        names[campaigns] = campaign;
        if (byName == null && campaigns == SCANNED) {
            byName = new HashMap<>();
            for (int c = 0; c < campaigns; c++) {
                byName.put(names[c], c);
            }
        }
        if (byName != null) {
            byName.put(campaign, campaigns);
        }
        return campaigns++;
    }

    /** The first entry at or after {@code t} ({@link #n} for none). */
    int firstAtOrAfter(long t) {
        int i = Arrays.binarySearch(ts, 0, n, t);
        if (i < 0) {
            return -i - 1;
        }
        while (i > 0 && ts[i - 1] == t) {
            i--;
        }
        return i;
    }
}
