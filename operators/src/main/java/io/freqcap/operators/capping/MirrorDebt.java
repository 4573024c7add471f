package io.freqcap.operators.capping;

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
 */
public final class MirrorDebt {
    private static final Logger LOG = LoggerFactory.getLogger(MirrorDebt.class);

    /**
     * Union state: after a restore at any parallelism, if any task owed a rebuild, every task
     * rebuilds (harmless: a rebuild is idempotent).
     */
    static final ListStateDescriptor<Boolean> STATE =
            new ListStateDescriptor<>("mirror-rebuild-owed-v1", Types.BOOLEAN);

    /** Rewrites every user's keys of this task. */
    interface Rebuild {
        void run() throws Exception;
    }

    private final ListState<Boolean> state;
    private boolean owed;
    private MirrorLink link;

    MirrorDebt(OperatorStateStore store) throws Exception {
        state = store.getUnionListState(STATE);
        for (Boolean o : state.get()) {
            owed |= o;
        }
        if (owed) {
            LOG.info("The Redis mirror is owed a rebuild: it runs once Redis answers");
        }
    }

    /** The link to this task's mirror writer (when the task opens). */
    void attach(MirrorLink link) {
        this.link = link;
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

    void snapshot() throws Exception {
        noteDrops();
        state.update(owed ? List.of(true) : List.of());
    }

    /** Runs the rebuild if one is owed and Redis answers again. */
    void payIfDue(Rebuild rebuild) throws Exception {
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

    void release() {
        if (link != null) {
            link.release();
            link = null;
        }
    }
}
