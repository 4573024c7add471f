package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.local.EmbeddedRedis;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.operators.mirror.RedisMirrorSink;
import io.freqcap.schema.mirror.MirrorLog;
import io.freqcap.schema.mirror.MirrorWrite;
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
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mirror sink on its own: with Redis away, a full backlog is dropped (and counted) rather than
 * hold the job back. (The rebuild that makes Redis exact again is the capping task's: see
 * RedisMirrorITCase.)
 */
class RedisMirrorSinkITCase {
    static final InMemoryReporter METRICS = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            KafkaPipelineSupport.miniCluster(METRICS.addToConfiguration(new Configuration()), 1, 2);

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
    void aFullBacklogIsDroppedAndNothingWaitsOnRedis() throws Exception {
        int writes = 5_000;
        int maxBacklog = 200;
        try (EmbeddedRedis redis = EmbeddedRedis.start(tmp.resolve("redis"), false)) {
            redis.kill(); // Redis is away for the whole run
            List<MirrorWrite> input = new ArrayList<>();
            for (int i = 0; i < writes; i++) {
                // A user's log, or a deletion waiting for its confirmation: both weigh in the
                // backlog (an erasure that did not could grow without bound).
                if (i % 2 == 0) {
                    MirrorLog log = new MirrorLog();
                    log.add(1_000_000L + i, "push", "m-" + i);
                    input.add(log.write(i % 700, 604_800_000L));
                } else {
                    input.add(MirrorWrite.deletion(i % 700, i));
                }
            }
            Configuration conf = new Configuration();
            conf.set(PipelineOptions.GENERIC_TYPES, false);
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(conf);
            env.setParallelism(1);
            env.fromData(TypeInformation.of(MirrorWrite.class), input.toArray(new MirrorWrite[0]))
                    .map(new Passed())
                    .sinkTo(
                            new RedisMirrorSink(
                                    io.freqcap.operators.mirror.MirrorSettings.of(
                                            redis.uri(), "bp", maxBacklog, null)))
                    .name("redis-mirror");
            long start = System.nanoTime();
            JobClient job = env.executeAsync("mirror-drop");
            job.getJobExecutionResult().get(); // ends although Redis never came back
            long seconds = (System.nanoTime() - start) / 1_000_000_000L;
            assertEquals(JobStatus.FINISHED, job.getJobStatus().get());
            assertTrue(seconds < 30, "finished in " + seconds + " s");
            assertEquals(writes, Passed.COUNT.get(), "every write passed");
            long dropped = counter(job, "redisDropped");
            assertTrue(
                    dropped >= writes - maxBacklog - 1 && dropped <= writes, dropped + " dropped");
            assertEquals(1L, gauge(job, "redisDropping"), "the drop is visible");
            assertEquals(0L, gauge(job, "redisBacklog"));
        }
    }

    static long counter(JobClient job, String name) {
        long sum = 0;
        for (var m : METRICS.findMetrics(job.getJobID(), name).values()) {
            sum += ((org.apache.flink.metrics.Counter) m).getCount();
        }
        return sum;
    }

    static long gauge(JobClient job, String name) {
        long sum = 0;
        for (var m : METRICS.findMetrics(job.getJobID(), name).values()) {
            sum += ((Number) ((Gauge<?>) m).getValue()).longValue();
        }
        return sum;
    }
}
