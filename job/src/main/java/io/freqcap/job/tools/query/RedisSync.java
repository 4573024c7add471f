package io.freqcap.job.tools.query;

import io.freqcap.operators.mirror.RedisConnection;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;

/**
 * A blocking connection to the mirror's Redis (single or cluster) for tools and tests that read it;
 * the job itself only writes, asynchronously ({@link RedisConnection}).
 */
public record RedisSync(AbstractRedisClient client, RedisClusterCommands<String, String> commands)
        implements AutoCloseable {

    public static RedisSync open(String uri) {
        return open(uri, null);
    }

    /**
     * @param passwordFile {@code --redis-password-file}, or null
     */
    public static RedisSync open(String uri, String passwordFile) {
        char[] password = passwordFile == null ? null : RedisConnection.readPassword(passwordFile);
        var uris = RedisConnection.parse(uri, password);
        if (RedisConnection.isCluster(uri)) {
            RedisClusterClient c = RedisClusterClient.create(uris);
            try {
                return new RedisSync(c, c.connect().sync());
            } catch (RuntimeException e) {
                c.shutdown();
                throw e;
            }
        }
        RedisClient c = RedisClient.create(uris.get(0));
        try {
            return new RedisSync(c, c.connect().sync());
        } catch (RuntimeException e) {
            c.shutdown();
            throw e;
        }
    }

    @Override
    public void close() {
        client.shutdown();
    }
}
