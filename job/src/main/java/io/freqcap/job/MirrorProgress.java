package io.freqcap.job;

import io.freqcap.operators.RedisConnection;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;

/** The local runner's view of the mirror: how many keys Redis holds (-1 while unreachable). */
final class MirrorProgress implements AutoCloseable {
    private final String uri;
    private AbstractRedisClient client;
    private RedisClusterCommands<String, String> redis;

    MirrorProgress(String uri) {
        this.uri = uri;
    }

    String uri() {
        return uri;
    }

    synchronized long keys() {
        try {
            if (redis == null) {
                if (RedisConnection.isCluster(uri)) {
                    RedisClusterClient c = RedisClusterClient.create(RedisConnection.parse(uri));
                    client = c;
                    redis = c.connect().sync();
                } else {
                    RedisClient c = RedisClient.create(uri);
                    client = c;
                    redis = c.connect().sync();
                }
            }
            return redis.dbsize();
        } catch (RuntimeException e) {
            close();
            return -1;
        }
    }

    @Override
    public synchronized void close() {
        if (client != null) {
            client.shutdown();
        }
        client = null;
        redis = null;
    }
}
