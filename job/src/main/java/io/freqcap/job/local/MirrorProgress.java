package io.freqcap.job.local;

import io.freqcap.job.tools.RedisSync;

/** The local runner's view of the mirror: how many keys Redis holds (-1 while unreachable). */
final class MirrorProgress implements AutoCloseable {
    private final String uri;
    private RedisSync redis;

    MirrorProgress(String uri) {
        this.uri = uri;
    }

    String uri() {
        return uri;
    }

    synchronized long keys() {
        try {
            if (redis == null) {
                redis = RedisSync.open(uri);
            }
            return redis.commands().dbsize();
        } catch (RuntimeException e) {
            close();
            return -1;
        }
    }

    @Override
    public synchronized void close() {
        if (redis != null) {
            redis.close();
        }
        redis = null;
    }
}
