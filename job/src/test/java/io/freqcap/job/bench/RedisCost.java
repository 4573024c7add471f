package io.freqcap.job.bench;

import io.freqcap.job.local.EmbeddedRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * What a run cost Redis: its CPU (INFO cpu, before and after) and the commands it ran (INFO
 * commandstats, those a script runs included), per counted message.
 */
final class RedisCost {
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> c;
    private final double cpuStart;

    private RedisCost(EmbeddedRedis redis) {
        client = RedisClient.create(redis.uri());
        c = client.connect();
        c.sync().configResetstat();
        cpuStart = MirrorCostBenchmark.cpuSeconds(c.sync().info("cpu"));
    }

    static RedisCost start(EmbeddedRedis redis) {
        return new RedisCost(redis);
    }

    void report(long counted) {
        double cpu = MirrorCostBenchmark.cpuSeconds(c.sync().info("cpu")) - cpuStart;
        long commands = MirrorCostBenchmark.commandCalls(c.sync().info("commandstats"));
        System.out.printf(
                "Redis: %.2f µs of CPU and %.2f commands per counted message (%,d counted)%n",
                cpu * 1e6 / Math.max(1, counted),
                (double) commands / Math.max(1, counted),
                counted);
        c.close();
        client.shutdown();
    }
}
