package io.freqcap.schema.history;

import io.freqcap.schema.config.Scope;
import io.freqcap.schema.message.OutboundMessage;
import java.util.Arrays;

/**
 * What the rule asks of a {@link UserHistory}'s columns in a scope (contract.md §6), read from its
 * columns: a scope selects one column of per-entry indexes (channel, category, campaign) and the
 * index its entries have there, so a query compares ints, never strings.
 */
final class ColumnQueries {
    private ColumnQueries() {}

    /** The per-entry indexes {@code scope} reads (null: 0 for every entry). */
    private static int[] column(HistoryColumns h, Scope scope) {
        return switch (scope.kind()) {
            case ALL -> null;
            case CHANNEL -> h.channelIndex;
            case CATEGORY -> h.categoryIndex;
            case CAMPAIGN -> h.campaignIndex;
        };
    }

    /** The index the entries of {@code scope} have in its {@link #column}; -1 when none can. */
    private static int wanted(HistoryColumns h, Scope scope) {
        return switch (scope.kind()) {
            case ALL -> 0;
            case CHANNEL -> Tabled.indexOf(h.channels, scope.name());
            case CATEGORY ->
                    OutboundMessage.DEFAULT_CATEGORY.equals(scope.name())
                            ? 0
                            : oneBased(Tabled.indexOf(h.categoryTable, scope.name()));
            case CAMPAIGN -> oneBased(Tabled.indexOf(h.campaignTable, scope.name()));
        };
    }

    private static int oneBased(int position) {
        return position < 0 ? -1 : position + 1;
    }

    private static boolean hit(int[] column, int wanted, int i) {
        return column == null ? wanted == 0 : column[i] == wanted;
    }

    static int count(HistoryColumns h, Scope scope, long after, long upTo) {
        int[] column = column(h, scope);
        int wanted = wanted(h, scope);
        if (wanted < 0 || (column == null && wanted != 0)) {
            return 0;
        }
        int n = 0;
        for (int i = 0; i < h.timestamps.length; i++) {
            long t = h.timestamps[i];
            if (t > after && t <= upTo && hit(column, wanted, i)) {
                n++;
            }
        }
        return n;
    }

    static long kthLatest(HistoryColumns h, Scope scope, int k) {
        int[] column = column(h, scope);
        int wanted = wanted(h, scope);
        for (int i = h.timestamps.length - 1; i >= 0 && wanted >= 0; i--) {
            if (hit(column, wanted, i) && --k == 0) {
                return h.timestamps[i];
            }
        }
        throw new IllegalArgumentException("fewer entries in scope than k");
    }

    static long[] timestampsAfter(HistoryColumns h, Scope scope, long after) {
        int[] column = column(h, scope);
        int wanted = wanted(h, scope);
        long[] out = new long[h.timestamps.length];
        int n = 0;
        for (int i = 0; i < h.timestamps.length && wanted >= 0; i++) {
            if (h.timestamps[i] > after && hit(column, wanted, i)) {
                out[n++] = h.timestamps[i];
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    static void forEachIn(
            HistoryColumns h, Scope scope, long after, long upTo, CountedHistory.EntryVisitor v) {
        int[] column = column(h, scope);
        int wanted = wanted(h, scope);
        for (int i = 0; i < h.timestamps.length && wanted >= 0; i++) {
            long t = h.timestamps[i];
            if (t > after && t <= upTo && hit(column, wanted, i)) {
                v.visit(t, h.offsetSeconds(i));
            }
        }
    }

    /** The latest timestamp an entry was stamped with, some entry held. */
    static long latestStamped(HistoryColumns h) {
        long latest = Long.MIN_VALUE;
        for (int i = 0; i < h.timestamps.length; i++) {
            latest = Math.max(latest, h.timestamps[i] - h.heldFor[i]);
        }
        return latest;
    }

    static int heldWaiting(HistoryColumns h, long now, int atMost) {
        int n = 0;
        for (int i = h.timestamps.length - 1;
                h.heldFor != null && i >= 0 && h.timestamps[i] > now;
                i--) {
            if (h.heldFor[i] > 0 && ++n >= atMost) {
                break;
            }
        }
        return n;
    }

    static void forEachHeldWaiting(HistoryColumns h, long now, CountedHistory.HeldVisitor v) {
        for (int i = h.timestamps.length - 1;
                h.heldFor != null && i >= 0 && h.timestamps[i] > now;
                i--) {
            if (h.heldFor[i] > 0) {
                v.visit(h.timestamps[i], h.fingerprints[i]);
            }
        }
    }

    static Long firstHeldWaiting(HistoryColumns h, long now) {
        Long first = null;
        for (int i = h.timestamps.length - 1;
                h.heldFor != null && i >= 0 && h.timestamps[i] > now;
                i--) {
            if (h.heldFor[i] > 0) {
                first = h.timestamps[i];
            }
        }
        return first;
    }

    /**
     * A history as tests and logs show it: each entry's timestamp, channel and what it has more.
     */
    static String describe(HistoryColumns h) {
        StringBuilder sb = new StringBuilder("UserHistory[");
        for (int i = 0; i < h.timestamps.length; i++) {
            sb.append(i == 0 ? "" : ", ").append(h.timestamps[i]).append('/').append(h.channel(i));
            if (h.categoryIndex != null) {
                sb.append('/').append(h.category(i));
            }
            if (h.campaign(i) != null) {
                sb.append("/c:").append(h.campaign(i));
            }
            if (h.offsets != null) {
                sb.append("/").append(h.offsets[i]).append('s');
            }
            if (h.heldFor != null && h.heldFor[i] != 0) {
                sb.append("/held ").append(h.heldFor[i]).append("ms");
            }
        }
        return sb.append(']').toString();
    }

    /** Whether two histories hold the same entries, whatever their tables' order. */
    /**
     * Whether both hold the same entries, field by field: a column that is null where every entry
     * has the default equals one that holds the defaults (a history that had a held or identified
     * entry removed keeps its column).
     */
    static boolean sameEntries(HistoryColumns a, HistoryColumns b) {
        if (!Arrays.equals(a.timestamps, b.timestamps)
                || !Arrays.equals(a.fingerprints, b.fingerprints)) {
            return false;
        }
        for (int i = 0; i < a.timestamps.length; i++) {
            if (!java.util.Objects.equals(a.messageId(i), b.messageId(i))
                    || a.offsetSeconds(i) != b.offsetSeconds(i)
                    || a.heldFor(i) != b.heldFor(i)
                    || !a.channel(i).equals(b.channel(i))
                    || !a.category(i).equals(b.category(i))
                    || !java.util.Objects.equals(a.campaign(i), b.campaign(i))) {
                return false;
            }
        }
        return true;
    }
}
