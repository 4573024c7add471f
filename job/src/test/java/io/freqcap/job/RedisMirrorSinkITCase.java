package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.operators.RedisMirrorSink;
import io.freqcap.schema.MirrorWrite;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The mirror sink on its own: a full backlog holds the job back, and nothing is dropped. */
class RedisMirrorSinkITCase {
    static final InMemoryReporter METRICS = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setConfiguration(METRICS.addToConfiguration(new Configuration()))
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    @TempDir Path tmp;

    /** Counts what passed on to the sink (chained to it, so no buffer in between). */
    static final class Passed implements MapFunction<MirrorWrite, MirrorWrite> {
        static final AtomicLong COUNT = new AtomicLong();

        @Override
        public MirrorWrite map(MirrorWrite w) {
            COUNT.incrementAndGet();
            return w;
        }
    }

    @Test
    @Timeout(120)
    void aFullBacklogBackpressuresTheJobAndNothingIsLost() throws Exception {
        int writes = 5_000;
        int maxBacklog = 200;
        try (EmbeddedRedis redis = EmbeddedRedis.start(tmp.resolve("redis"), false)) {
            redis.kill(); // Redis is away from the start
            List<MirrorWrite> input = new ArrayList<>();
            for (int i = 0; i < writes; i++) {
                input.add(MirrorWrite.of(i % 700, 604_800_000L, "m-" + i, 1_000_000L + i, "push"));
            }
            Configuration conf = new Configuration();
            conf.set(PipelineOptions.GENERIC_TYPES, false);
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(conf);
            env.setParallelism(1);
            env.fromData(TypeInformation.of(MirrorWrite.class), input.toArray(new MirrorWrite[0]))
                    .map(new Passed())
                    .sinkTo(new RedisMirrorSink(redis.uri(), "bp", maxBacklog))
                    .name("redis-mirror");
            JobClient job = env.executeAsync("mirror-backpressure");

            Thread.sleep(3_000);
            long passed = Passed.COUNT.get();
            assertTrue(passed <= maxBacklog + 1, passed + " writes passed with Redis away");
            assertEquals(1L, gauge(job, "redisBackpressured"), "backpressure is visible");
            assertTrue(gauge(job, "redisBacklog") > maxBacklog - 1, "backlog at its bound");

            redis.start();
            job.getJobExecutionResult().get(); // ends once Redis took everything
            assertEquals(JobStatus.FINISHED, job.getJobStatus().get());
            RedisClient client = RedisClient.create(redis.uri());
            try {
                RedisCommands<String, String> r = client.connect().sync();
                long members = 0;
                for (String key : r.keys("bp:{*}")) {
                    members += r.zcard(key);
                }
                assertEquals(writes, members, "every write arrived");
                assertEquals(writes / 700 + 1, r.zcard("bp:{0}"));
            } finally {
                client.shutdown();
            }
        }
    }

    static long gauge(JobClient job, String name) {
        long sum = 0;
        for (var m : METRICS.findMetrics(job.getJobID(), name).values()) {
            sum += ((Number) ((Gauge<?>) m).getValue()).longValue();
        }
        return sum;
    }
}
