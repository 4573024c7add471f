package io.freqcap.operators.mirror;

import io.freqcap.schema.mirror.MirrorWrite;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The mirror writer's writes not sent yet, at most one per user: a write states the user's whole
 * log, so a later one replaces an earlier one not sent yet (contract.md §7: several changes of one
 * user between two writes become one). The backlog then weighs each user's latest log once, not
 * every copy a Redis outage piled up. A replaced write's deletion id (a deletion the capping task
 * waits to see confirmed) and the layout-1 keys it names go on with the write that replaced it: its
 * acknowledgement settles them too.
 */
final class PendingWrites {
    private Map<Long, MirrorWrite> writes = new LinkedHashMap<>();
    private long weight;

    /** Adds a write, replacing the user's write not sent yet. */
    void add(MirrorWrite w) {
        MirrorWrite before = writes.get(w.userId());
        MirrorWrite now = before == null ? w : merged(before, w);
        writes.put(w.userId(), now);
        weight += now.size() - (before == null ? 0 : before.size());
    }

    /** Puts writes sent before (and failed) in front, in their order; later ones replace them. */
    void addFirst(List<MirrorWrite> older) {
        Map<Long, MirrorWrite> newer = writes;
        writes = new LinkedHashMap<>();
        weight = 0;
        older.forEach(this::add);
        newer.values().forEach(this::add);
    }

    /** The oldest write not sent, taken out; null when none. */
    MirrorWrite poll() {
        Iterator<MirrorWrite> it = writes.values().iterator();
        if (!it.hasNext()) {
            return null;
        }
        MirrorWrite w = it.next();
        it.remove();
        weight -= w.size();
        return w;
    }

    int size() {
        return writes.size();
    }

    boolean isEmpty() {
        return writes.isEmpty();
    }

    /** What the writes weigh in the backlog ({@link MirrorWrite#size}). */
    long weight() {
        return weight;
    }

    /** Gives up every write; returns what they weighed. */
    long clear() {
        long w = weight;
        writes.clear();
        weight = 0;
        return w;
    }

    /** The writes, oldest first (a checkpoint keeps them). */
    List<MirrorWrite> list() {
        return new ArrayList<>(writes.values());
    }

    /** {@code later}, carrying what {@code earlier} still had to settle. */
    static MirrorWrite merged(MirrorWrite earlier, MirrorWrite later) {
        long deletion = later.deletion() != 0 ? later.deletion() : earlier.deletion();
        String[] legacy = later.legacyChannels();
        if (earlier.legacyChannels().length > 0) {
            Set<String> all = new LinkedHashSet<>(List.of(earlier.legacyChannels()));
            all.addAll(List.of(later.legacyChannels()));
            legacy = all.toArray(new String[0]);
        }
        if (deletion == later.deletion() && legacy == later.legacyChannels()) {
            return later;
        }
        return new MirrorWrite(
                later.userId(), later.log(), later.expireAt(), later.entries(), deletion, legacy);
    }
}
