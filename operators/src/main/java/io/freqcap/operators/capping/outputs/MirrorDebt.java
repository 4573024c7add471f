package io.freqcap.operators.capping.outputs;

import io.freqcap.operators.mirror.MirrorLink;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongPredicate;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.api.common.typeinfo.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a capping task owes the Redis mirror a rebuild: its writer dropped writes (Redis away
 * past --redis-max-backlog, or a backlog of layout 1 restored) and the rebuild has not run yet.
 * Kept in checkpoints, so that a restore in between still owes it; the rebuild runs once the writer
 * sees Redis answer again.
 *
 * <p>It also remembers every deletion of a user's key ({@code forget-user}, and a user whose last
 * counted message stopped counting) until Redis has acknowledged that very deletion (contract §7):
 * a dropped backlog may have held it, and a rebuild only writes users still in state, so the
 * rebuild deletes these users' keys first. Each deletion has its own id, so a second deletion of a
 * user is remembered apart from the first: the first's acknowledgement does not settle it. Kept in
 * checkpoints too, so a restore keeps them.
 */
public final class MirrorDebt {
    private static final Logger LOG = LoggerFactory.getLogger(MirrorDebt.class);

    /**
     * Union state: after a restore at any parallelism, if any task owed a rebuild, every task
     * rebuilds (harmless: a rebuild is idempotent).
     */
    static final ListStateDescriptor<Boolean> STATE =
            new ListStateDescriptor<>("mirror-rebuild-owed-v1", Types.BOOLEAN);

    /**
     * Deletions Redis has not acknowledged, each as its userId, its id and the channels of layout-1
     * keys it removes too, space-separated. Union state: after a restore, each task keeps those of
     * its own key groups.
     */
    static final ListStateDescriptor<String> DELETIONS =
            new ListStateDescriptor<>("mirror-deletions-v2", Types.STRING);

    /**
     * Version 5's erasures (layout 1): userId and the channels of its keys, space-separated. Read
     * once on restore, as deletions of the user's key and those channel keys.
     */
    static final ListStateDescriptor<String> ERASURES_V1 =
            new ListStateDescriptor<>("mirror-erasures-v1", Types.STRING);

    /**
     * The parallelism of the tasks that took the checkpoint. Union state: a restore at another
     * parallelism owes a rebuild, since a writer's restored backlog may then hold users another
     * task owns now (the writer drops those; their owner writes them again).
     */
    static final ListStateDescriptor<Integer> PARALLELISM =
            new ListStateDescriptor<>("mirror-parallelism-v1", Types.INT);

    /** Rewrites every user's key of this task. */
    public interface Rebuild {
        void run() throws Exception;
    }

    /** A deletion waiting for Redis: its id and the layout-1 channel keys it removes too. */
    public record Deletion(long id, String[] legacyChannels) {}

    private final ListState<Boolean> state;
    private final ListState<String> deletionState;
    private final ListState<String> erasuresV1;
    private final ListState<Integer> parallelismState;
    private final List<Integer> restoredParallelism = new ArrayList<>();
    private int parallelism;
    private final Map<Long, Deletion> deletions = new LinkedHashMap<>();
    private boolean owed;
    private MirrorLink link;

    /** The longest window the users' keys were last written under (MIN_VALUE: none yet). */
    private long window = Long.MIN_VALUE;

    public MirrorDebt(OperatorStateStore store) throws Exception {
        state = store.getUnionListState(STATE);
        deletionState = store.getUnionListState(DELETIONS);
        erasuresV1 = store.getUnionListState(ERASURES_V1);
        parallelismState = store.getUnionListState(PARALLELISM);
        parallelismState.get().forEach(restoredParallelism::add);
        for (String e : erasuresV1.get()) {
            String[] parts = e.split(" ");
            deletions.put(
                    Long.parseLong(parts[0]),
                    new Deletion(newId(), Arrays.copyOfRange(parts, 1, parts.length)));
        }
        for (String e : deletionState.get()) {
            String[] parts = e.split(" ");
            deletions.put(
                    Long.parseLong(parts[0]),
                    new Deletion(
                            Long.parseLong(parts[1]), Arrays.copyOfRange(parts, 2, parts.length)));
        }
        for (Boolean o : state.get()) {
            owed |= o;
        }
        if (owed) {
            LOG.info("The Redis mirror is owed a rebuild: it runs once Redis answers");
        }
    }

    /** A fresh deletion id: never 0, and unlike any other task's (union state meets them all). */
    private static long newId() {
        long id;
        do {
            id = ThreadLocalRandom.current().nextLong();
        } while (id == 0);
        return id;
    }

    /**
     * The link to this task's mirror writer (when the task opens).
     *
     * @param ownUser whether a user's key group is this task's: the deletions of others are theirs
     * @param parallelism the capping operator's parallelism now
     */
    public void attach(MirrorLink link, LongPredicate ownUser, int parallelism) {
        this.link = link;
        this.parallelism = parallelism;
        if (restoredParallelism.stream().anyMatch(p -> p != parallelism)) {
            LOG.info(
                    "Restored at parallelism {} from {}: every user's Redis key is rebuilt once"
                            + " Redis answers",
                    parallelism,
                    restoredParallelism);
            owed = true;
        }
        deletions.keySet().removeIf(u -> !ownUser.test(u));
        if (!deletions.isEmpty()) {
            LOG.info("{} users' keys wait for Redis to confirm their deletion", deletions.size());
        }
    }

    /**
     * The user's key is being deleted: remembered until Redis confirms this deletion, which
     * replaces any earlier one of the user. Returns its id.
     */
    long deleting(long user) {
        long id = newId();
        Deletion before = deletions.get(user);
        // A restored erasure of version 5 still names its layout-1 keys: keep them.
        deletions.put(
                user, new Deletion(id, before == null ? new String[0] : before.legacyChannels()));
        return id;
    }

    /** Deletions Redis has not confirmed yet (a rebuild sends them again first). */
    Map<Long, Deletion> deletions() {
        confirmDeletions();
        return new LinkedHashMap<>(deletions);
    }

    private void confirmDeletions() {
        if (link != null) {
            for (MirrorLink.Deleted d : link.takeErased()) {
                Deletion waiting = deletions.get(d.userId());
                if (waiting != null && waiting.id() == d.deletion()) {
                    deletions.remove(d.userId());
                }
            }
        }
    }

    /**
     * Whether the longest window in force changed since the last call (the first call only
     * remembers it): every user's log then holds other entries and expires at another time, so
     * every key is written again (contract.md §7: the log holds what the window in force keeps).
     * Not checkpointed: a restore starts from the config it restores, and a config record replayed
     * after it changes the window again.
     */
    public boolean windowChanged(long longest) {
        boolean changed = window != Long.MIN_VALUE && window != longest;
        window = longest;
        return changed;
    }

    /** Remembers that the mirror's writer dropped writes, if it did. */
    void noteDrops() {
        if (link != null && link.takeDropped()) {
            if (!owed) {
                LOG.warn("Redis mirror dropped writes: a rebuild is owed once Redis answers");
            }
            owed = true;
        }
    }

    public void snapshot() throws Exception {
        noteDrops();
        state.update(owed ? List.of(true) : List.of());
        confirmDeletions();
        List<String> pending = new ArrayList<>();
        deletions.forEach(
                (u, d) -> {
                    StringBuilder s = new StringBuilder().append(u).append(' ').append(d.id());
                    for (String c : d.legacyChannels()) {
                        s.append(' ').append(c);
                    }
                    pending.add(s.toString());
                });
        deletionState.update(pending);
        erasuresV1.update(List.of());
        parallelismState.update(List.of(parallelism));
    }

    /** Runs the rebuild if one is owed and Redis answers again. */
    public void payIfDue(Rebuild rebuild) throws Exception {
        noteDrops();
        if (!owed || link == null || !link.redisAnswered()) {
            return;
        }
        owed = false;
        rebuild(rebuild);
    }

    /**
     * Runs a rebuild (owed, asked for, or a new window): while it runs the writer waits, bounded,
     * for room in its backlog rather than drop what the rebuild writes.
     */
    public void rebuild(Rebuild rebuild) throws Exception {
        if (link == null) {
            rebuild.run();
            return;
        }
        link.startRebuild();
        try {
            rebuild.run();
        } finally {
            link.endRebuild();
        }
        noteDrops(); // dropped again during the rebuild: owed again
    }

    public void release() {
        if (link != null) {
            link.release();
            link = null;
        }
    }
}
