package io.freqcap.operators.mirror;

import io.freqcap.schema.mirror.MirrorWrite;
import io.freqcap.schema.mirror.MirrorWriteSerializer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Redis mirror's writer: batches writes (each a user's whole log, contract.md §7 layout 2) into
 * pipelined commands, many flushed together, and keeps what Redis has not acknowledged.
 *
 * <p><b>Guarantee.</b> A write leaves the backlog only when Redis acknowledged it. A checkpoint
 * sends what is pending without waiting for Redis, and stores everything unacknowledged (unsent and
 * in flight) in the checkpoint; a restored writer sends it again. Writes are idempotent, so sending
 * one twice is harmless. Together with the capping operator's exactly-once state, after any failure
 * Redis holds exactly the counted messages.
 *
 * <p><b>Redis away.</b> Failed writes go back to the head of the backlog and are retried with
 * exponential backoff (100 ms to 2 s); decisions go on. Past {@code maxBacklog} unacknowledged
 * messages the writer drops its backlog ({@code redisDropped}) and every write after it, so that no
 * delivery ever waits on Redis, and tells its capping task through their {@link MirrorLink}; the
 * capping task records that a rebuild is owed (in its checkpointed state), and once this writer
 * sees Redis answer again (a ping while dropping), rewrites every user's key as {@code
 * rebuild-mirror} does. While that rebuild runs, a full backlog waits a bounded time for Redis
 * instead of dropping. Commands time out after {@link RedisConnection#COMMAND_TIMEOUT}.
 *
 * <p>Everything runs on the task's thread (writes, the linger timer, checkpoints); lettuce's
 * threads only complete futures, which this thread polls. The connection and the backoff are {@link
 * RedisChannel}'s; the backlog, dropping and the rebuild are this class's.
 */
final class RedisMirrorWriter implements StatefulSinkWriter<MirrorWrite, MirrorWrite> {
    private static final Logger LOG = LoggerFactory.getLogger(RedisMirrorWriter.class);

    /** How long a rebuild's write may wait for room in the backlog before the writer drops. */
    private static final long REBUILD_WAIT_NANOS = 5_000_000_000L;

    private final MirrorSettings settings;
    private final ProcessingTimeService timers;
    private final PendingWrites pending = new PendingWrites();

    private final ResendQueue resent = new ResendQueue();

    /** Counted messages not acknowledged by Redis (pending and in flight). */
    private volatile long backlog;

    /** Dropping every write until the capping task starts a rebuild. */
    private volatile boolean dropping;

    /** Rebuilds started by the capping task that this writer has seen. */
    private long rebuildsSeen;

    private final MirrorLink link;
    private final RedisChannel channel;
    private boolean closed;

    private final Counter writes;
    private final Counter dropped;

    RedisMirrorWriter(
            MirrorSettings settings, WriterInitContext context, Collection<MirrorWrite> restored) {
        this.settings = settings;
        this.timers = context.getProcessingTimeService();
        link =
                MirrorLink.acquire(
                        context.getJobInfo().getJobId().toString(),
                        context.getTaskInfo().getIndexOfThisSubtask(),
                        context.getTaskInfo().getAttemptNumber());
        long legacy = 0;
        long foreign = 0;
        int subtask = context.getTaskInfo().getIndexOfThisSubtask();
        int parallelism = context.getTaskInfo().getNumberOfParallelSubtasks();
        int maxParallelism = context.getTaskInfo().getMaxNumberOfParallelSubtasks();
        for (MirrorWrite w : restored) {
            if (w == MirrorWriteSerializer.LEGACY) {
                legacy++;
            } else if (KeyGroupRangeAssignment.assignKeyToParallelOperator(
                            w.userId(), maxParallelism, parallelism)
                    != subtask) {
                // Restored at another parallelism: the user's capping task is another one now,
                // which writes the user's key itself (it rebuilds every key after a rescale,
                // MirrorDebt); sent from here, this older log could land after its newer one.
                foreign++;
            } else {
                pending.add(w);
            }
        }
        if (foreign > 0) {
            LOG.info(
                    "Redis mirror restored {} writes of users another task owns now: left to"
                            + " their task's rebuild",
                    foreign);
        }
        if (!restored.isEmpty()) {
            LOG.info("Redis mirror restored a backlog of {} counted messages", pending.weight());
        }
        if (legacy > 0) {
            // Writes of layout 1 (version 5) cannot be said in layout 2 without the histories:
            // the capping task rebuilds every user's key instead, once Redis answers.
            LOG.info(
                    "Redis mirror restored {} writes of layout 1: every user's key is rebuilt in"
                            + " layout 2 instead, once Redis answers",
                    legacy);
            link.dropped();
        }
        rebuildsSeen = link.rebuildsStarted();
        MetricGroup metrics = context.metricGroup();
        writes = metrics.counter("redisWrites");
        dropped = metrics.counter("redisDropped");
        channel = new RedisChannel(settings, metrics, () -> backlog);
        recount();
        metrics.gauge("redisBacklog", () -> backlog);
        metrics.gauge("redisDropping", () -> dropping ? 1 : 0);
        scheduleLinger();
    }

    @Override
    public void write(MirrorWrite w, Context context) throws InterruptedException {
        resumeIfRebuilding();
        if (dropping) {
            dropped.inc(w.size());
            return;
        }
        pending.add(w);
        recount();
        poll();
        send(false);
        if (backlog > settings.maxBacklog()) {
            if (link.rebuilding() && waitForRoom(REBUILD_WAIT_NANOS)) {
                return;
            }
            drop();
        }
    }

    /** A rebuild started: what it writes (and everything after) goes to Redis again. */
    private void resumeIfRebuilding() {
        long started = link.rebuildsStarted();
        if (started != rebuildsSeen) {
            rebuildsSeen = started;
            if (dropping) {
                dropping = false;
                LOG.info("Redis mirror: rebuilding every user's keys; writing again");
            }
        }
    }

    /**
     * Waits, at most {@code nanos}, until the backlog is under its bound (while a rebuild writes
     * every user's keys, Redis answering). Returns whether it is.
     */
    private boolean waitForRoom(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        while (backlog > settings.maxBacklog() && System.nanoTime() < deadline) {
            Thread.sleep(1);
            poll();
            send(true);
        }
        return backlog <= settings.maxBacklog();
    }

    /**
     * Drops the backlog and every write until the next rebuild: deliveries never wait on Redis.
     * Writes in flight stay: those Redis acknowledges are written, the others are dropped too.
     */
    private void drop() {
        long n = pending.clear();
        n += resent.clear();
        recount();
        dropped.inc(n);
        dropping = true;
        link.dropped();
        LOG.warn(
                "Redis mirror backlog over --redis-max-backlog {}: dropped {} counted messages,"
                        + " and drops every write until Redis answers again; then every user's"
                        + " keys are rebuilt from state",
                settings.maxBacklog(),
                n);
    }

    /**
     * Before a checkpoint: sends what is pending, without waiting for Redis (what is unacknowledged
     * goes into the checkpoint; waiting here halved the job's throughput). At the end of a bounded
     * input: waits until Redis acknowledged everything, however long Redis is away.
     */
    @Override
    public void flush(boolean endOfInput) throws InterruptedException {
        poll();
        send(true);
        long lastLog = System.nanoTime();
        while (endOfInput && backlog > 0) {
            Thread.sleep(1);
            poll();
            send(true);
            if (System.nanoTime() - lastLog > 10_000_000_000L) {
                lastLog = System.nanoTime();
                LOG.warn("End of input: waiting for Redis to take {} counted messages", backlog);
            }
        }
    }

    @Override
    public List<MirrorWrite> snapshotState(long checkpointId) {
        poll();
        List<MirrorWrite> unacknowledged = new ArrayList<>(resent.writes());
        channel.inFlightWrites(unacknowledged);
        unacknowledged.addAll(pending.list());
        return unacknowledged;
    }

    private void scheduleLinger() {
        if (closed) {
            return;
        }
        timers.registerTimer(
                timers.getCurrentProcessingTime() + settings.lingerMillis(),
                time -> {
                    poll();
                    resumeIfRebuilding();
                    if (dropping || !link.redisAnswered()) {
                        probe(); // a rebuild may wait for Redis to answer
                    }
                    if (!dropping) {
                        send(true);
                    }
                    scheduleLinger();
                });
    }

    /** While dropping or waiting for Redis: tells the link when Redis answers. */
    private void probe() {
        if (channel.answered(!link.redisAnswered())) {
            link.redisAnswers();
        }
    }

    /**
     * Sends pending writes in batches: full batches only, or everything when {@code all} (linger
     * timer, checkpoint, backlog over its bound).
     */
    private void send(boolean all) {
        while (!pending.isEmpty()
                && (all || pending.size() >= settings.batchSize())
                && channel.ready()) {
            int n = Math.min(settings.batchSize(), pending.size());
            List<MirrorWrite> batch = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                batch.add(pending.poll());
            }
            channel.send(batch);
        }
    }

    /** Takes Redis' answers: acknowledged writes leave the backlog, failed ones wait again. */
    private void poll() {
        RedisChannel.Answers answers = channel.poll();
        writes.inc(answers.writes());
        recount();
        // While dropping, only a ping sent then says Redis answers again: an answer to a write
        // sent before the drop (Redis stalling just after it) would start a rebuild into a Redis
        // that does not answer.
        if ((answers.acked() > 0 || !answers.deleted().isEmpty()) && !dropping) {
            link.redisAnswers();
        }
        if (!answers.deleted().isEmpty()) {
            link.erased(answers.deleted());
        }
        List<MirrorWrite> failed = answers.failed();
        if (failed.isEmpty()) {
            return;
        }
        if (dropping) {
            long n = 0;
            for (MirrorWrite w : failed) {
                n += w.size();
            }
            dropped.inc(n);
            channel.giveUp(answers);
            return;
        }
        resent.failed(failed, channel.hasInFlight(), pending);
        recount(); // writes sent again merge with later ones of their users
        channel.retryLater(answers);
    }

    /**
     * What waits for Redis: the writes not sent (one per user), sent again, and in flight, each
     * weighing its log's entries (a deletion one).
     */
    private void recount() {
        backlog = pending.weight() + resent.weight() + channel.inFlightWeight();
    }

    @Override
    public void close() {
        closed = true;
        link.release();
        channel.close();
    }
}
