package io.freqcap.operators.mirror;

import java.io.Serializable;

/**
 * How the Redis mirror writes.
 *
 * @param uri {@code redis://}, {@code rediss://} or {@code redis-cluster://h1:p1,...}
 * @param keyPrefix {@code <prefix>} of the keys
 * @param maxBacklog counted messages that may wait unwritten; past it the mirror drops them and its
 *     capping task rebuilds every user's keys once Redis answers
 * @param batchSize writes per flush
 * @param lingerMillis a partial batch waits at most this long
 * @param passwordFile {@code --redis-password-file}, read by each task when it connects (so the
 *     password never travels in the job graph), or null
 */
public record MirrorSettings(
        String uri,
        String keyPrefix,
        long maxBacklog,
        int batchSize,
        long lingerMillis,
        String passwordFile)
        implements Serializable {

    /** Writes sent to Redis in one flush (one round trip per node). */
    public static final int DEFAULT_BATCH_SIZE = 500;

    /** How long a partial batch waits. */
    public static final long DEFAULT_LINGER_MILLIS = 50;

    /** Settings whose credentials, if any, are in the uri. */
    public MirrorSettings(
            String uri, String keyPrefix, long maxBacklog, int batchSize, long lingerMillis) {
        this(uri, keyPrefix, maxBacklog, batchSize, lingerMillis, null);
    }

    /** The job's mirror: default batches. */
    public static MirrorSettings of(
            String uri, String keyPrefix, long maxBacklog, String passwordFile) {
        return new MirrorSettings(
                uri,
                keyPrefix,
                maxBacklog,
                DEFAULT_BATCH_SIZE,
                DEFAULT_LINGER_MILLIS,
                passwordFile);
    }

    /** What may be shown of it: the uri with its password as {@code ***}. */
    @Override
    public String toString() {
        return "MirrorSettings[uri="
                + RedisConnection.redact(uri)
                + ", keyPrefix="
                + keyPrefix
                + ", maxBacklog="
                + maxBacklog
                + ", batchSize="
                + batchSize
                + ", lingerMillis="
                + lingerMillis
                + ", passwordFile="
                + passwordFile
                + "]";
    }
}
