package io.freqcap.operators.capping.history;

import io.freqcap.schema.config.Scope;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link LongHistory}'s index of timestamps per scope: a sorted column for each channel, category
 * and campaign an entry has, dropped once empty.
 */
final class ScopeColumns {
    private final Map<Scope, TimestampColumn> columns = new HashMap<>();

    /** Indexes an entry at {@code t} (campaign null for none). */
    void add(long t, String channel, String category, String campaign) {
        column(Scope.channel(channel)).add(t);
        column(Scope.category(category)).add(t);
        if (campaign != null) {
            column(Scope.campaign(campaign)).add(t);
        }
    }

    /** Removes an entry at {@code t} (campaign null for none). */
    void remove(long t, String channel, String category, String campaign) {
        drop(Scope.channel(channel), t);
        drop(Scope.category(category), t);
        if (campaign != null) {
            drop(Scope.campaign(campaign), t);
        }
    }

    /** Drops the timestamps at or before {@code cutoff}. */
    void dropThrough(long cutoff) {
        columns.values().removeIf(c -> c.dropThrough(cutoff) == 0);
    }

    /** The column of a scope (not {@link Scope#ALL}); an empty one for none. */
    TimestampColumn get(Scope scope) {
        TimestampColumn c = columns.get(scope);
        return c == null ? TimestampColumn.EMPTY : c;
    }

    /** Those of these channels that index an entry. */
    String[] used(List<String> channels) {
        List<String> used = new ArrayList<>();
        for (String c : channels) {
            if (get(Scope.channel(c)).size() > 0) {
                used.add(c);
            }
        }
        return used.toArray(new String[0]);
    }

    private TimestampColumn column(Scope scope) {
        return columns.computeIfAbsent(scope, s -> new TimestampColumn());
    }

    private void drop(Scope scope, long t) {
        TimestampColumn c = columns.get(scope);
        if (c != null && c.remove(t) == 0) {
            columns.remove(scope);
        }
    }
}
