package io.freqcap.operators.mirror;

import io.freqcap.operators.mirror.MirrorLink.Deleted;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.LongSupplier;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The mirror writer's way to Redis: (re)connects, sends batches of writes as pipelined commands
 * (one per user: {@code SET key log PXAT expireAt}, or {@code DEL key} for an empty or expired
 * log), keeps the batches in flight in the order sent, and backs off (100 ms to 2 s) after a
 * failure. What to do with writes that failed is the writer's.
 *
 * <p>Runs on the task's thread only; lettuce's threads complete futures, which {@link #poll} reads.
 */
final class RedisChannel {
    private static final Logger LOG = LoggerFactory.getLogger(RedisChannel.class);
    private static final int MAX_BATCHES_IN_FLIGHT = 8;
    private static final long MIN_BACKOFF_MILLIS = 100;
    private static final long MAX_BACKOFF_MILLIS = 2000;

    /**
     * What came back from Redis since the last {@link #poll}.
     *
     * @param failed writes to send again, in order: those Redis did not acknowledge, and every one
     *     sent after the first of them (acknowledged or not), so that a user's writes are applied
     *     again in the order they were made (a log sent again after a later one would bring back
     *     what that one left out)
     * @param failures calls that failed (the {@code redisErrors} counter)
     * @param acked what the acknowledged writes weighed in the backlog ({@link MirrorWrite#size})
     * @param writes how many writes (keys set or deleted) Redis acknowledged
     * @param deleted deletions with an id that Redis acknowledged
     */
    record Answers(
            long acked,
            long writes,
            List<MirrorWrite> failed,
            Throwable cause,
            List<Deleted> deleted,
            int failures) {
        static final Answers NONE = new Answers(0, 0, List.of(), null, List.of(), 0);
    }

    /**
     * Writes sent in one flush and the answers of their commands: acknowledged when every command
     * succeeded, else sent again whole (every command is idempotent).
     */
    private static final class Batch {
        final List<MirrorWrite> writes;
        final List<MirrorCommand> acks;
        final long sentNanos = System.nanoTime();
        private int done;

        Batch(List<MirrorWrite> writes) {
            this.writes = writes;
            this.acks = new ArrayList<>(writes.size() + 1);
        }

        /**
         * Whether every command was answered; remembers how far it found them answered. A batch not
         * answered within {@link RedisConnection#COMMAND_TIMEOUT} is cancelled: it failed, and is
         * sent again after any batch sent after it (a command Redis runs late is followed by the
         * same or a later log of its user on the same connection).
         */
        boolean isDone() {
            while (done < acks.size() && acks.get(done).isDone()) {
                done++;
            }
            if (done < acks.size()
                    && System.nanoTime() - sentNanos > RedisConnection.COMMAND_TIMEOUT.toNanos()) {
                for (int i = done; i < acks.size(); i++) {
                    acks.get(i)
                            .completeExceptionally(
                                    new java.util.concurrent.TimeoutException(
                                            "no answer within "
                                                    + RedisConnection.COMMAND_TIMEOUT.toMillis()
                                                    + " ms"));
                }
                done = acks.size();
            }
            return done == acks.size();
        }

        /** The first failure among the answers, or null. */
        Throwable error() {
            for (MirrorCommand c : acks) {
                String e = c.failure();
                if (e != null) {
                    return new io.lettuce.core.RedisException(e);
                }
            }
            return null;
        }
    }

    private final MirrorSettings settings;
    private final LongSupplier backlog;
    private final ArrayDeque<Batch> inFlight = new ArrayDeque<>();

    /** What the writes in flight weigh in the backlog. */
    private long inFlightWeight;

    private CompletableFuture<RedisConnection> connecting;
    private RedisConnection connection;

    /**
     * A call failed: until every batch in flight has come back (each to be sent again after it),
     * nothing new is sent.
     */
    private boolean resending;

    private CompletableFuture<?> probe;
    private long backoffMillis;
    private long retryAtNanos;
    private long failuresInEpisode;

    /**
     * Bytes of the last batch's logs and how many logs it held (the {@code redisLogBytes} gauge).
     */
    private volatile long lastLogBytes;

    private final Counter errors;
    private final Counter flushes;
    private final Histogram writeMillis;

    /**
     * @param backlog the writer's unacknowledged counted messages, for the log
     */
    RedisChannel(MirrorSettings settings, MetricGroup metrics, LongSupplier backlog) {
        this.settings = settings;
        this.backlog = backlog;
        errors = metrics.counter("redisErrors");
        flushes = metrics.counter("redisFlushes");
        writeMillis =
                metrics.histogram("redisWriteMillis", new DescriptiveStatisticsHistogram(1000));
        metrics.gauge("redisLogBytes", () -> lastLogBytes);
    }

    /**
     * Whether a batch may be sent now: connected, not backing off and fewer than {@link
     * #MAX_BATCHES_IN_FLIGHT} in flight. Starts connecting when needed; the linger timer or the
     * next write asks again.
     */
    boolean ready() {
        if (inFlight.size() >= MAX_BATCHES_IN_FLIGHT || System.nanoTime() < retryAtNanos) {
            return false;
        }
        if (resending && !inFlight.isEmpty()) {
            return false; // what is in flight comes back to be sent again first
        }
        return connection() != null;
    }

    /**
     * Sends one batch, one command per write, queued on the connection and flushed together (one
     * write to the socket per batch; in a cluster one per node). Only after {@link #ready()} said
     * yes.
     */
    void send(List<MirrorWrite> batch) {
        RedisConnection c = connection;
        Batch b = new Batch(batch);
        long now = System.currentTimeMillis();
        long bytes = 0;
        int logs = 0;
        for (MirrorWrite w : batch) {
            inFlightWeight += w.size();
            String key = MirrorWrite.userKey(settings.keyPrefix(), w.userId());
            if (w.deletes() || w.expireAt() <= now) {
                b.acks.add(MirrorCommand.del(RedisConnection.CODEC, keys(key, w)));
            } else {
                if (w.legacyChannels().length > 0) {
                    // A log that replaced an erasure of version 5 not confirmed: its layout-1
                    // keys go too (the log's acknowledgement settles that erasure).
                    String[] legacy = keys(key, w);
                    b.acks.add(
                            MirrorCommand.del(
                                    RedisConnection.CODEC,
                                    java.util.Arrays.copyOfRange(legacy, 1, legacy.length)));
                }
                b.acks.add(MirrorCommand.set(RedisConnection.CODEC, key, w));
                bytes += w.log().length;
                logs++;
            }
        }
        try {
            c.dispatch(b.acks);
        } catch (RuntimeException refused) { // disconnected: lettuce rejects rather than queues
            for (MirrorCommand command : b.acks) {
                command.completeExceptionally(refused);
            }
        }
        if (logs > 0) {
            lastLogBytes = bytes / logs;
        }
        c.flush();
        flushes.inc();
        inFlight.add(b);
    }

    /** The keys a deletion removes: the user's, and layout-1 keys an old erasure names. */
    private String[] keys(String key, MirrorWrite w) {
        String[] out = new String[1 + w.legacyChannels().length];
        out[0] = key;
        for (int i = 0; i < w.legacyChannels().length; i++) {
            out[i + 1] =
                    MirrorWrite.legacyChannelKey(
                            settings.keyPrefix(), w.userId(), w.legacyChannels()[i]);
        }
        return out;
    }

    /** Takes the answers of finished batches, in the order they were sent. */
    Answers poll() {
        if (inFlight.isEmpty() || !inFlight.peek().isDone()) {
            return Answers.NONE;
        }
        List<MirrorWrite> failed = new ArrayList<>();
        Throwable cause = null;
        long acked = 0;
        long writes = 0;
        int failures = 0;
        List<Deleted> deleted = null;
        while (!inFlight.isEmpty() && inFlight.peek().isDone()) {
            Batch b = inFlight.poll();
            for (MirrorWrite w : b.writes) {
                inFlightWeight -= w.size();
            }
            writeMillis.update((System.nanoTime() - b.sentNanos) / 1_000_000);
            Throwable error = b.error();
            if (error == null && !resending) {
                writes += b.writes.size();
                for (MirrorWrite w : b.writes) {
                    acked += w.size();
                    if (w.deletion() != 0) {
                        deleted = deleted == null ? new ArrayList<>() : deleted;
                        deleted.add(new Deleted(w.userId(), w.deletion()));
                    }
                }
            } else {
                // A log sent again after a later one of its user would bring back what that one
                // left out: everything sent after a failure is sent again too, after it.
                failed.addAll(b.writes);
                if (error != null) {
                    resending = true;
                    failures++;
                    cause = error;
                }
            }
        }
        if (inFlight.isEmpty()) {
            resending = false;
        }
        if (failed.isEmpty() && acked > 0 && failuresInEpisode > 0) {
            LOG.info("Redis mirror writes succeed again after {} failed writes", failuresInEpisode);
            failuresInEpisode = 0;
            backoffMillis = 0;
        }
        return new Answers(
                acked, writes, failed, cause, deleted == null ? List.of() : deleted, failures);
    }

    /** The failed writes of {@code answers} will be sent again, after a backoff. */
    void retryLater(Answers answers) {
        if (answers.failures() == 0) {
            return; // only writes sent again after an earlier failure, to keep their order
        }
        failed(answers.failures(), answers.cause());
    }

    /** The failed writes of {@code answers} are given up (the writer is dropping). */
    void giveUp(Answers answers) {
        errors.inc(answers.failures());
    }

    /**
     * Asks Redis whether it answers ({@code PING}), with backoff: returns true once a ping was
     * answered. Starts a new ping only when {@code ask}.
     */
    boolean answered(boolean ask) {
        if (probe != null) {
            if (!probe.isDone()) {
                return false;
            }
            Throwable error = errorOf(probe);
            probe = null;
            if (error == null) {
                backoffMillis = 0;
                failuresInEpisode = 0;
                return true;
            }
            failed(1, error);
        }
        if (!ask || System.nanoTime() < retryAtNanos) {
            return false;
        }
        RedisConnection c = connection();
        if (c != null) {
            probe = c.commands().ping().toCompletableFuture();
            c.flush();
        }
        return false;
    }

    /** What the writes in flight weigh in the backlog ({@link MirrorWrite#size}). */
    long inFlightWeight() {
        return inFlightWeight;
    }

    /** Whether batches are in flight. */
    boolean hasInFlight() {
        return !inFlight.isEmpty();
    }

    /** Adds the writes of the batches in flight, oldest first. */
    void inFlightWrites(List<MirrorWrite> out) {
        for (Batch b : inFlight) {
            out.addAll(b.writes);
        }
    }

    /** The connection, or null while (re)connecting or backing off. */
    private RedisConnection connection() {
        if (connection != null) {
            return connection;
        }
        if (connecting == null) {
            connecting = RedisConnection.connect(settings.uri(), settings.passwordFile());
        }
        if (!connecting.isDone()) {
            return null;
        }
        try {
            connection = connecting.join();
            LOG.info("Redis mirror connected to {}", RedisConnection.redact(settings.uri()));
        } catch (CompletionException | CancellationException e) {
            connecting = null;
            failed(1, e.getCause() != null ? e.getCause() : e);
        }
        return connection;
    }

    private void failed(int count, Throwable cause) {
        errors.inc(count);
        if (failuresInEpisode == 0) {
            LOG.warn(
                    "Redis mirror cannot write to {} ({}); decisions go on, {} counted messages"
                            + " wait and are retried with backoff",
                    RedisConnection.redact(settings.uri()),
                    cause.toString(),
                    backlog.getAsLong());
        }
        failuresInEpisode += count;
        backoffMillis =
                Math.min(MAX_BACKOFF_MILLIS, Math.max(MIN_BACKOFF_MILLIS, backoffMillis * 2));
        retryAtNanos = System.nanoTime() + backoffMillis * 1_000_000;
    }

    private static Throwable errorOf(Future<?> f) {
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

    void close() {
        if (connection != null) {
            connection.close();
        } else if (connecting != null) {
            connecting.thenAccept(RedisConnection::close);
        }
    }
}
