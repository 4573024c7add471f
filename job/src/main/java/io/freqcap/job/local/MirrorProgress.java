package io.freqcap.job.local;

import io.freqcap.job.tools.query.RedisSync;

/** The local runner's view of the mirror: how many keys Redis holds (-1 while unreachable). */
final class MirrorProgress implements AutoCloseable {
    private final String uri;
    private final String passwordFile;
    private RedisSync redis;

    MirrorProgress(String uri, String passwordFile) {
        this.uri = uri;
        this.passwordFile = passwordFile;
    }

    String uri() {
        return uri;
    }

    String passwordFile() {
        return passwordFile;
    }

    synchronized long keys() {
        try {
            if (redis == null) {
                redis = RedisSync.open(uri, passwordFile);
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
