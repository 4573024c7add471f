package io.freqcap.operators.capping.outputs;

import io.freqcap.operators.mirror.MirrorLink;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.api.common.typeinfo.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a capping task owes the Redis mirror a rebuild: its writer dropped writes (Redis away
 * past --redis-max-backlog) and the rebuild has not run yet. Kept in checkpoints, so that a restore
 * in between still owes it; the rebuild runs once the writer sees Redis answer again.
 *
 * <p>It also remembers every {@code forget-user} erasure until Redis has acknowledged it (contract
 * §7): a dropped backlog may have held it, and a rebuild only writes users still in state, so the
 * rebuild deletes these users' keys first. Kept in checkpoints too, so a restore keeps them.
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
     * Users erased whose deletion Redis has not acknowledged, each as its userId and the channels
     * of its keys, space-separated (channel names have no spaces). Union state: after a restore,
     * each task keeps those of its own key groups.
     */
    static final ListStateDescriptor<String> ERASURES =
            new ListStateDescriptor<>("mirror-erasures-v1", Types.STRING);

    /** Rewrites every user's keys of this task. */
    public interface Rebuild {
        void run() throws Exception;
    }

    private final ListState<Boolean> state;
    private final ListState<String> erasureState;
    private final java.util.Map<Long, String[]> erasures = new java.util.LinkedHashMap<>();
    private boolean owed;
    private MirrorLink link;

    public MirrorDebt(OperatorStateStore store) throws Exception {
        state = store.getUnionListState(STATE);
        erasureState = store.getUnionListState(ERASURES);
        for (String e : erasureState.get()) {
            String[] parts = e.split(" ");
            erasures.put(
                    Long.parseLong(parts[0]), java.util.Arrays.copyOfRange(parts, 1, parts.length));
        }
        for (Boolean o : state.get()) {
            owed |= o;
        }
        if (owed) {
            LOG.info("The Redis mirror is owed a rebuild: it runs once Redis answers");
        }
    }

    /**
     * The link to this task's mirror writer (when the task opens).
     *
     * @param ownUser whether a user's key group is this task's: the erasures of others are theirs
     */
    public void attach(MirrorLink link, java.util.function.LongPredicate ownUser) {
        this.link = link;
        erasures.keySet().removeIf(u -> !ownUser.test(u));
        if (!erasures.isEmpty()) {
            LOG.info(
                    "{} erased users wait for Redis to confirm their keys deleted",
                    erasures.size());
        }
    }

    /** A user's keys (its own and its channels') are being deleted: kept until Redis confirms. */
    void erasing(long user, String[] channels) {
        erasures.put(user, channels.clone());
    }

    /**
     * Users whose erasure Redis has not confirmed yet, with their channels (a rebuild deletes their
     * keys first).
     */
    java.util.Map<Long, String[]> erasures() {
        confirmErasures();
        return new java.util.LinkedHashMap<>(erasures);
    }

    private void confirmErasures() {
        if (link != null) {
            for (long u : link.takeErased()) {
                erasures.remove(u);
            }
        }
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
        confirmErasures();
        List<String> pending = new java.util.ArrayList<>();
        erasures.forEach((u, channels) -> pending.add(u + " " + String.join(" ", channels)));
        erasureState.update(pending);
    }

    /** Runs the rebuild if one is owed and Redis answers again. */
    public void payIfDue(Rebuild rebuild) throws Exception {
        noteDrops();
        if (!owed || link == null || !link.redisAnswered()) {
            return;
        }
        owed = false;
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
