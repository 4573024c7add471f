package io.freqcap.operators.capping.state;

import io.freqcap.operators.capping.history.LongHistory;
import io.freqcap.schema.history.UserHistory;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;
import org.apache.flink.api.common.state.MapState;

/**
 * The long histories a task holds in memory (heavy users, see {@link HistoryStore}), within a
 * budget of estimated heap bytes: past it the least recently used are written (the buckets that
 * changed) and dropped, and read again from their buckets when their user comes back. A change to a
 * live history goes between {@link #changing} and {@link #changed}, so that the sums stay right.
 */
public final class LiveHistories {
    private final LinkedHashMap<Long, LongHistory> live = new LinkedHashMap<>(16, 0.75f, true);
    private final long budget;
    private final LongConsumer keySetter;
    private final MapState<Long, UserHistory> buckets;
    private long entries;
    private long bytes;

    /**
     * @param budget estimated bytes the long histories in memory may take together
     * @param keySetter switches the operator's current key (to write a history it drops)
     * @param buckets the current key's buckets in keyed state
     */
    LiveHistories(long budget, LongConsumer keySetter, MapState<Long, UserHistory> buckets) {
        this.budget = budget;
        this.keySetter = keySetter;
        this.buckets = buckets;
    }

    /** The live long history of {@code user}; null when memory holds none. */
    LongHistory get(long user) {
        return live.get(user);
    }

    /** Holds the long history of {@code user}, the current key, in memory. */
    LongHistory add(long user, LongHistory l) throws Exception {
        live.put(user, l);
        changed(user, l);
        return l;
    }

    /** Before {@code l} is changed in place. */
    void changing(LongHistory l) {
        entries -= l.size();
        bytes -= l.bytes();
    }

    /** After {@code l} of {@code user}, the current key, was changed (or added): within budget. */
    void changed(long user, LongHistory l) throws Exception {
        entries += l.size();
        bytes += l.bytes();
        evictOver(user);
    }

    /** Drops the history of {@code user} from memory after {@link #changing} it to a short one. */
    void droppedShort(long user) {
        live.remove(user);
    }

    /** Drops the history of {@code user} from memory, unwritten (it is erased). */
    void remove(long user) {
        LongHistory l = live.remove(user);
        if (l != null) {
            changing(l);
        }
    }

    /** Drops the least recently used long histories (written first) while over the budget. */
    private void evictOver(long current) throws Exception {
        if (bytes <= budget) {
            return;
        }
        Iterator<Map.Entry<Long, LongHistory>> it = live.entrySet().iterator();
        boolean switched = false;
        while (bytes > budget && it.hasNext()) {
            Map.Entry<Long, LongHistory> e = it.next();
            if (e.getKey() == current) {
                continue; // the user being decided stays, however long
            }
            keySetter.accept(e.getKey());
            switched = true;
            writeChanged(e.getValue());
            changing(e.getValue());
            it.remove();
        }
        if (switched) {
            keySetter.accept(current);
        }
    }

    /**
     * Writes the changed buckets of every live history to keyed state.
     *
     * @return how many histories
     */
    int flush() throws Exception {
        List<Map.Entry<Long, LongHistory>> changed = new ArrayList<>();
        for (Map.Entry<Long, LongHistory> e : live.entrySet()) {
            if (e.getValue().hasChanges()) {
                changed.add(e);
            }
        }
        for (Map.Entry<Long, LongHistory> e : changed) {
            keySetter.accept(e.getKey());
            writeChanged(e.getValue());
        }
        return changed.size();
    }

    /** Writes the buckets of {@code l} that changed; its user is the current key. */
    private void writeChanged(LongHistory l) throws Exception {
        for (Map.Entry<Long, UserHistory> e : l.takeChanged().entrySet()) {
            if (e.getValue().isEmpty()) {
                buckets.remove(e.getKey());
            } else {
                buckets.put(e.getKey(), e.getValue());
            }
        }
    }

    /** Forgets every live history, unwritten. */
    void clear() {
        live.clear();
        entries = 0;
        bytes = 0;
    }

    public int size() {
        return live.size();
    }

    public long bytes() {
        return bytes;
    }

    public long entries() {
        return entries;
    }
}
