package io.freqcap.operators.mirror;

import java.util.HashMap;
import java.util.Map;

/**
 * What a capping task and its Redis mirror writer tell each other, so that the mirror can drop its
 * backlog instead of stopping deliveries, and be made exact again (contract.md §7): the writer says
 * when it dropped writes and when Redis answers again; the capping task, which holds the histories,
 * then rewrites every user's keys as {@code rebuild-mirror} does, and records in its checkpointed
 * state that a rebuild is owed until it has run.
 *
 * <p>The two find each other by job, subtask and attempt: the mirror sink has the capping
 * operator's parallelism and is chained to it (one thread), so writer i receives exactly what
 * capping task i counted. An explicit, reference-counted registry, the one kind of static mutable
 * state worth having: each side {@link #acquire}s it when it opens and {@link #release}s it when it
 * closes. Nothing in it is checkpointed. Why not Flink's API: a sink cannot send anything back to
 * the operator that feeds it. The job's graph test ({@code FreqcapJobGraphTest}) fails if the
 * writer stops being chained to its capping task.
 */
public final class MirrorLink {
    private static final Map<String, MirrorLink> LINKS = new HashMap<>();

    private final String key;
    private int holders;

    private volatile boolean dropped;
    private volatile boolean redisAnswers;
    private volatile boolean rebuilding;
    private final java.util.List<Deleted> erasedUsers = new java.util.ArrayList<>();
    private final java.util.concurrent.atomic.AtomicLong rebuilds =
            new java.util.concurrent.atomic.AtomicLong();

    private MirrorLink(String key) {
        this.key = key;
    }

    /** The link of one subtask attempt of a job. */
    public static MirrorLink acquire(String jobId, int subtask, int attempt) {
        String key = jobId + "/" + subtask + "/" + attempt;
        synchronized (LINKS) {
            MirrorLink link = LINKS.computeIfAbsent(key, MirrorLink::new);
            link.holders++;
            return link;
        }
    }

    public void release() {
        synchronized (LINKS) {
            if (--holders <= 0) {
                LINKS.remove(key);
            }
        }
    }

    /** Links held in this JVM (for tests). */
    static int size() {
        synchronized (LINKS) {
            return LINKS.size();
        }
    }

    // The writer's side.

    /** Writes were dropped: Redis is missing counted messages until a rebuild. */
    void dropped() {
        dropped = true;
        redisAnswers = false;
    }

    /** Redis answered a command (a write, a script load, a ping). */
    void redisAnswers() {
        redisAnswers = true;
    }

    /** Whether the capping task is rewriting every user's keys right now. */
    boolean rebuilding() {
        return rebuilding;
    }

    /** Rebuilds started so far: a writer that sees a new one stops dropping. */
    long rebuildsStarted() {
        return rebuilds.get();
    }

    /** A deletion of a user's key, by its id, that Redis acknowledged. */
    public record Deleted(long userId, long deletion) {}

    /** Redis acknowledged these deletions. */
    void erased(java.util.List<Deleted> users) {
        synchronized (erasedUsers) {
            erasedUsers.addAll(users);
        }
    }

    // The capping task's side.

    /** Deletions Redis acknowledged since the last call. */
    public java.util.List<Deleted> takeErased() {
        synchronized (erasedUsers) {
            if (erasedUsers.isEmpty()) {
                return java.util.List.of();
            }
            java.util.List<Deleted> out = new java.util.ArrayList<>(erasedUsers);
            erasedUsers.clear();
            return out;
        }
    }

    /** Whether writes were dropped since the last call; clears the flag. */
    public boolean takeDropped() {
        boolean d = dropped;
        dropped = false;
        return d;
    }

    /** Whether Redis has answered since the last drop. */
    public boolean redisAnswered() {
        return redisAnswers;
    }

    /**
     * Before the capping task writes every user's keys again: the writer stops dropping, and while
     * the rebuild runs it waits (bounded) for room rather than drop.
     */
    public void startRebuild() {
        rebuilds.incrementAndGet();
        rebuilding = true;
    }

    public void endRebuild() {
        rebuilding = false;
    }
}
