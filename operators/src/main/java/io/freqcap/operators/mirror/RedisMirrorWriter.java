package io.freqcap.operators.mirror;

import io.freqcap.schema.MirrorWrite;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Redis mirror's writer: batches writes into pipelined {@code EVALSHA} calls of {@link
 * MirrorScript}, many flushed together, and keeps what Redis has not acknowledged.
 *
 * <p><b>Guarantee.</b> A write leaves the backlog only when Redis acknowledged it. A checkpoint
 * sends what is pending without waiting for Redis, and stores everything unacknowledged (unsent and
 * in flight) in the checkpoint; a restored writer sends it again. Writes are idempotent, so sending
 * one twice is harmless. Together with the capping operator's exactly-once state, after any failure
 * Redis holds exactly the counted messages.
 *
 * <p><b>Redis away.</b> Failed writes go back to the head of the backlog and are retried with
 * exponential backoff (100 ms to 5 s); decisions go on. A {@code NOSCRIPT} answer (a restarted or
 * failed-over Redis lost its script cache) loads the script again and retries at once. Past {@code
 * maxBacklog} unacknowledged messages the writer drops its backlog ({@code redisDropped}) and every
 * write after it, so that no delivery ever waits on Redis, and tells its capping task through their
 * {@link MirrorLink}; the capping task records that a rebuild is owed (in its checkpointed state),
 * and once this writer sees Redis answer again (a ping while dropping), rewrites every user's keys
 * as {@code rebuild-mirror} does. While that rebuild runs, a full backlog waits a bounded time for
 * Redis instead of dropping. Commands time out after {@link RedisConnection#COMMAND_TIMEOUT}.
 *
 * <p>Everything runs on the task's thread (writes, the linger timer, checkpoints); lettuce's
 * threads only complete futures, which this thread polls.
 */
final class RedisMirrorWriter implements StatefulSinkWriter<MirrorWrite, MirrorWrite> {
    private static final Logger LOG = LoggerFactory.getLogger(RedisMirrorWriter.class);
    private static final int MAX_BATCHES_IN_FLIGHT = 8;
    private static final int WRITES_PER_CALL = 50;
    private static final long MIN_BACKOFF_MILLIS = 100;
    private static final long MAX_BACKOFF_MILLIS = 2000;

    /** How long a rebuild's write may wait for room in the backlog before the writer drops. */
    private static final long REBUILD_WAIT_NANOS = 5_000_000_000L;

    private final MirrorSettings settings;
    private final ProcessingTimeService timers;
    private final ArrayDeque<MirrorWrite> pending = new ArrayDeque<>();
    private final ArrayDeque<Batch> inFlight = new ArrayDeque<>();

    /** Counted messages not acknowledged by Redis (pending and in flight). */
    private volatile long backlog;

    /** Dropping every write until the capping task starts a rebuild. */
    private volatile boolean dropping;

    /** Rebuilds started by the capping task that this writer has seen. */
    private long rebuildsSeen;

    private final MirrorLink link;
    private CompletableFuture<?> probe;

    private CompletableFuture<RedisConnection> connecting;
    private RedisConnection connection;
    private boolean scriptLoaded;
    private CompletableFuture<String> scriptLoading;
    private long backoffMillis;
    private long retryAtNanos;
    private long failuresInEpisode;
    private boolean closed;

    private final Counter writes;
    private final Counter errors;
    private final Counter dropped;
    private final Counter flushes;
    private final Counter scriptLoads;
    private final Histogram writeMillis;

    /** Writes sent in one flush: one script call per group. */
    private record Batch(
            List<List<MirrorWrite>> calls, List<RedisFuture<Long>> acks, long sentNanos) {
        boolean isDone() {
            for (RedisFuture<Long> f : acks) {
                if (!f.isDone()) {
                    return false;
                }
            }
            return true;
        }
    }

    RedisMirrorWriter(
            MirrorSettings settings, WriterInitContext context, Collection<MirrorWrite> restored) {
        this.settings = settings;
        this.timers = context.getProcessingTimeService();
        for (MirrorWrite w : restored) {
            pending.add(w);
            backlog += w.size();
        }
        if (!restored.isEmpty()) {
            LOG.info("Redis mirror restored a backlog of {} counted messages", backlog);
        }
        link =
                MirrorLink.acquire(
                        context.getJobInfo().getJobId().toString(),
                        context.getTaskInfo().getIndexOfThisSubtask(),
                        context.getTaskInfo().getAttemptNumber());
        rebuildsSeen = link.rebuildsStarted();
        MetricGroup metrics = context.metricGroup();
        writes = metrics.counter("redisWrites");
        errors = metrics.counter("redisErrors");
        dropped = metrics.counter("redisDropped");
        flushes = metrics.counter("redisFlushes");
        scriptLoads = metrics.counter("redisScriptLoads");
        writeMillis =
                metrics.histogram("redisWriteMillis", new DescriptiveStatisticsHistogram(1000));
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
        backlog += w.size();
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
        long n = 0;
        for (MirrorWrite w : pending) {
            n += w.size();
        }
        pending.clear();
        backlog -= n;
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
        List<MirrorWrite> unacknowledged = new ArrayList<>();
        for (Batch b : inFlight) {
            b.calls().forEach(unacknowledged::addAll);
        }
        unacknowledged.addAll(pending);
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

    /** While dropping: asks Redis whether it answers (with backoff), and tells the link. */
    private void probe() {
        if (probe != null) {
            if (!probe.isDone()) {
                return;
            }
            Throwable error = errorOf(probe);
            probe = null;
            if (error == null) {
                link.redisAnswers();
                backoffMillis = 0;
                failuresInEpisode = 0;
                return;
            }
            failed(1, error);
        }
        if (link.redisAnswered() || System.nanoTime() < retryAtNanos) {
            return;
        }
        RedisConnection c = connection();
        if (c != null) {
            // A scripting command (what the connection offers): any answer means Redis is back.
            probe = c.commands().scriptExists(MirrorScript.SHA1).toCompletableFuture();
            c.flush();
        }
    }

    /** The connection, or null while (re)connecting or backing off. */
    private RedisConnection connection() {
        if (connection != null) {
            return connection;
        }
        if (connecting == null) {
            connecting = RedisConnection.connect(settings.uri());
        }
        if (!connecting.isDone()) {
            return null;
        }
        try {
            connection = connecting.join();
            scriptLoaded = false;
            LOG.info("Redis mirror connected to {}", settings.uri());
        } catch (CompletionException | java.util.concurrent.CancellationException e) {
            connecting = null;
            failed(1, e.getCause() != null ? e.getCause() : e);
        }
        return connection;
    }

    /**
     * Sends pending writes in batches: full batches only, or everything when {@code all} (linger
     * timer, checkpoint, backlog over its bound).
     */
    private void send(boolean all) {
        while (!pending.isEmpty()
                && (all || pending.size() >= settings.batchSize())
                && inFlight.size() < MAX_BATCHES_IN_FLIGHT
                && System.nanoTime() >= retryAtNanos) {
            RedisConnection c = connection();
            if (c == null) {
                return;
            }
            if (!scriptLoaded) {
                // In a cluster SCRIPT LOAD goes to every node over other connections than the
                // calls: wait for its answers before the first call, or it may meet NOSCRIPT.
                scriptLoading = c.commands().scriptLoad(MirrorScript.SOURCE).toCompletableFuture();
                c.flush();
                scriptLoaded = true;
                scriptLoads.inc();
            }
            if (!scriptLoading.isDone()) {
                return; // the linger timer or the next write comes back
            }
            if (scriptLoading.isCompletedExceptionally()) {
                scriptLoaded = false;
                failed(1, errorOf(scriptLoading));
                return;
            }
            // One script call per user in a cluster (one slot per call), up to
            // WRITES_PER_CALL users per call on a single Redis.
            int perCall = c.isCluster() ? 1 : WRITES_PER_CALL;
            int n = Math.min(settings.batchSize(), pending.size());
            List<List<MirrorWrite>> calls = new ArrayList<>(n / perCall + 1);
            List<RedisFuture<Long>> acks = new ArrayList<>(n / perCall + 1);
            List<MirrorWrite> call = new ArrayList<>(perCall);
            for (int i = 0; i < n; i++) {
                MirrorWrite w = pending.poll();
                if (!call.isEmpty()
                        && (call.size() == perCall
                                || call.get(0).windowMillis() != w.windowMillis())) {
                    acks.add(evalsha(c, call));
                    calls.add(call);
                    call = new ArrayList<>(perCall);
                }
                call.add(w);
            }
            acks.add(evalsha(c, call));
            calls.add(call);
            c.flush();
            flushes.inc();
            inFlight.add(new Batch(calls, acks, System.nanoTime()));
        }
    }

    private RedisFuture<Long> evalsha(RedisConnection c, List<MirrorWrite> call) {
        return c.commands()
                .evalsha(
                        MirrorScript.SHA1,
                        ScriptOutputType.INTEGER,
                        MirrorScript.keys(settings.keyPrefix(), call),
                        MirrorScript.args(call));
    }

    /** Takes the answers of finished batches, in the order they were sent. */
    private void poll() {
        List<MirrorWrite> retry = null;
        Throwable cause = null;
        boolean noScript = false;
        boolean anyAcked = false;
        while (!inFlight.isEmpty() && inFlight.peek().isDone()) {
            Batch b = inFlight.poll();
            writeMillis.update((System.nanoTime() - b.sentNanos()) / 1_000_000);
            long acked = 0;
            for (int i = 0; i < b.acks().size(); i++) {
                Throwable error = errorOf(b.acks().get(i));
                List<MirrorWrite> call = b.calls().get(i);
                if (error == null) {
                    for (MirrorWrite w : call) {
                        acked += w.size();
                    }
                    continue;
                }
                if (retry == null) {
                    retry = new ArrayList<>();
                }
                retry.addAll(call);
                noScript |= error instanceof RedisNoScriptException;
                cause = error;
            }
            writes.inc(acked);
            backlog -= acked;
            anyAcked |= acked > 0;
        }
        if (anyAcked) {
            link.redisAnswers();
        }
        if (retry != null && dropping) {
            long n = 0;
            for (MirrorWrite w : retry) {
                n += w.size();
            }
            backlog -= n;
            dropped.inc(n);
            errors.inc(retry.size());
            return;
        }
        if (retry == null) {
            if (anyAcked && failuresInEpisode > 0) {
                LOG.info(
                        "Redis mirror writes succeed again after {} failed writes",
                        failuresInEpisode);
                failuresInEpisode = 0;
                backoffMillis = 0;
            }
            return;
        }
        for (int i = retry.size() - 1; i >= 0; i--) {
            pending.addFirst(retry.get(i));
        }
        if (noScript) {
            LOG.info("Redis answered NOSCRIPT (restarted or failed over?): loading the script");
            scriptLoaded = false;
            errors.inc(retry.size());
        } else {
            failed(retry.size(), cause);
        }
    }

    private void failed(int count, Throwable cause) {
        errors.inc(count);
        if (failuresInEpisode == 0) {
            LOG.warn(
                    "Redis mirror cannot write to {} ({}); decisions go on, {} counted messages"
                            + " wait and are retried with backoff",
                    settings.uri(),
                    cause.toString(),
                    backlog);
        }
        failuresInEpisode += count;
        backoffMillis =
                Math.min(MAX_BACKOFF_MILLIS, Math.max(MIN_BACKOFF_MILLIS, backoffMillis * 2));
        retryAtNanos = System.nanoTime() + backoffMillis * 1_000_000;
    }

    private static Throwable errorOf(java.util.concurrent.Future<?> f) {
        try {
            f.get();
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return e;
        } catch (RuntimeException e) {
            return e;
        }
    }

    @Override
    public void close() {
        closed = true;
        link.release();
        if (connection != null) {
            connection.close();
        } else if (connecting != null) {
            connecting.thenAccept(RedisConnection::close);
        }
    }
}
