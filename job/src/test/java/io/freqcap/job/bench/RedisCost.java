package io.freqcap.job.bench;

import io.freqcap.job.local.EmbeddedRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.List;

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

    private double perCounted;

    void report(long counted) {
        double cpu = MirrorCostBenchmark.cpuSeconds(c.sync().info("cpu")) - cpuStart;
        perCounted = cpu * 1e6 / Math.max(1, counted);
        long commands = MirrorCostBenchmark.commandCalls(c.sync().info("commandstats"));
        System.out.printf(
                "Redis: %.2f µs of CPU and %.2f commands per counted message (%,d counted)%n",
                cpu * 1e6 / Math.max(1, counted),
                (double) commands / Math.max(1, counted),
                counted);
    }

    /**
     * Runs the Lua sliding log over the workload's users and times (as the benchmark produced them)
     * on the same redis-server, after the job: Redis CPU per decision beside the mirror's per
     * counted message. Empties Redis first.
     */
    void slidingLogBeside(EndToEndBenchmark.Workload w, long start) throws Exception {
        java.util.Random rnd = new java.util.Random(42);
        double step = (double) w.spanMillis() / w.messages();
        long[] users = new long[w.messages()];
        long[] times = new long[w.messages()];
        for (int i = 0; i < users.length; i++) {
            users[i] = rnd.nextInt(w.users());
            times[i] = start + (long) (i * step) + rnd.nextInt(3_600_000);
        }
        var traffic =
                new MirrorCostBenchmark.Traffic(users, times, List.of(), List.of(), List.of(), 0);
        String row =
                MirrorCostBenchmark.measure(
                        c,
                        "Lua sliding log on the same redis-server, per decision",
                        users.length,
                        () -> MirrorCostBenchmark.slidingLog(c, traffic));
        double perDecision = Double.parseDouble(row.split("\\|")[2].trim());
        System.out.printf(
                "the mirror's Redis CPU per counted message is %.0f%% of the sliding log's per"
                        + " decision%n",
                100 * perCounted / perDecision);
        c.close();
        client.shutdown();
    }
}
