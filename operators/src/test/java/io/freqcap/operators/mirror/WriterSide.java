package io.freqcap.operators.mirror;

import java.util.List;

/**
 * The mirror writer's side of a capping task's {@link MirrorLink}, played by a test: Redis away
 * (the backlog dropped), Redis answering again, Redis confirming a deletion by its id. Acquired
 * while the capping task holds the link (the same job, subtask and attempt), released on close.
 */
public final class WriterSide implements AutoCloseable {
    private final MirrorLink link;

    public WriterSide(String jobId, int subtask, int attempt) {
        this.link = MirrorLink.acquire(jobId, subtask, attempt);
    }

    /** The writer dropped its backlog: Redis misses what it held. */
    public void dropped() {
        link.dropped();
    }

    /** Redis answers the writer again. */
    public void redisAnswers() {
        link.redisAnswers();
    }

    /** Redis acknowledged the deletion of the user's key with this id. */
    public void confirmed(long user, long deletion) {
        link.erased(List.of(new MirrorLink.Deleted(user, deletion)));
    }

    /** Rebuilds the capping task started so far. */
    public long rebuildsStarted() {
        return link.rebuildsStarted();
    }

    @Override
    public void close() {
        link.release();
    }
}
