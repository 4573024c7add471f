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
 */
public record MirrorSettings(
        String uri, String keyPrefix, long maxBacklog, int batchSize, long lingerMillis)
        implements Serializable {}
