package io.freqcap.operators.capping.outputs;

import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.mirror.MirrorLog;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.function.Consumer;
import org.roaringbitmap.longlong.LongIterator;
import org.roaringbitmap.longlong.Roaring64Bitmap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Redis mirror's side of a capping task (contract.md §7, layout 2): the users whose counted
 * messages changed since their key was last written, and the write of a user's whole log from the
 * history the task keeps. Several changes of one user between two flushes become one write.
 *
 * <p>Flushed every {@link #FLUSH_MILLIS}, when {@link #MAX_PENDING} users wait, before every
 * checkpoint barrier and at the end of input ({@code CappingOperator}): a change is in the writer's
 * backlog (checkpointed) before the checkpoint that holds it completes, so nothing is lost across a
 * restore. Not checkpointed itself: what it holds is written before each barrier.
 */
public final class MirrorLogs {
    private static final Logger LOG = LoggerFactory.getLogger(MirrorLogs.class);

    /** How long a change waits at most before its user's key is written (wall clock). */
    public static final long FLUSH_MILLIS = 100;

    /** Users waiting past which the task writes them at once. */
    public static final int MAX_PENDING = 50_000;

    /** The history of a user made the current key, to write its log. */
    public interface HistoryOf {
        CountedHistory get(long user) throws Exception;
    }

    private Roaring64Bitmap changed = new Roaring64Bitmap();
    private int pending;

    /** The user's counted messages changed: its key is written at the next flush. */
    public void changed(long user) {
        if (!changed.contains(user)) {
            changed.addLong(user);
            pending++;
        }
    }

    /** Users waiting for their key to be written. */
    public int pending() {
        return pending;
    }

    /**
     * Writes every changed user's log, in user order.
     *
     * @param window the longest window in force
     * @param deleting the write of a deletion of a user's key (remembered until Redis confirms it)
     */
    public void flush(
            HistoryOf histories,
            long window,
            java.util.function.LongFunction<MirrorWrite> deleting,
            Consumer<MirrorWrite> out) {
        if (pending == 0) {
            return;
        }
        Roaring64Bitmap users = changed;
        changed = new Roaring64Bitmap();
        pending = 0;
        LongIterator it = users.getLongIterator();
        while (it.hasNext()) {
            long user = it.next();
            MirrorWrite w;
            try {
                w = MirrorLog.of(user, histories.get(user), window);
            } catch (Exception e) {
                // The decisions of this user meet the same history; its key is left to expire.
                LOG.warn("Redis mirror: the history of user {} cannot be read", user, e);
                continue;
            }
            out.accept(w.deletes() ? deleting.apply(user) : w);
        }
    }
}
