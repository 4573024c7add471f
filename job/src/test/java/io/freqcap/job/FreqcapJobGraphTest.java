package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.testutils.Traffic;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.capping.outputs.HeldNotices;
import io.freqcap.operators.mirror.MirrorSettings;
import io.freqcap.operators.mirror.RedisMirrorSink;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.message.RawRecord;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.junit.jupiter.api.Test;

/**
 * The job's graph as Flink builds it. The Redis mirror's writer must run chained to the capping
 * task (one thread): MirrorLink, the registry through which writer i tells capping task i that it
 * dropped writes, relies on it. A change of the graph or of Flink's chaining that breaks it fails
 * here, before any mirror test.
 */
class FreqcapJobGraphTest {
    /** The job on a record and a sweep, into discarding sinks, at parallelism 2. */
    static void buildJob(
            StreamExecutionEnvironment env, CappingSettings settings, RedisMirrorSink mirror) {
        env.setParallelism(2);
        FreqcapJob.build(
                settings,
                env.fromData(
                        List.of(new RawRecord(null, new byte[0], "in", 0, 0)),
                        TypeInformation.of(RawRecord.class)),
                env.fromData(
                                List.of(ControlRecord.sweep(0)),
                                TypeInformation.of(ControlRecord.class))
                        .setParallelism(1),
                new DiscardingSink<>(),
                new DiscardingSink<>(),
                mirror);
    }

    /** The names of the graph's tasks that capping runs in. */
    static List<String> cappingTasks(StreamExecutionEnvironment env) {
        List<String> withCapping = new ArrayList<>();
        for (JobVertex v : env.getStreamGraph().getJobGraph().getVertices()) {
            if (v.getName().contains("capping")) {
                withCapping.add(v.getName());
            }
        }
        return withCapping;
    }

    @Test
    void theMirrorWriterRunsInTheCappingTask() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        buildJob(
                env,
                CappingSettings.of(Traffic.config(1, 2, 6, 1)),
                new RedisMirrorSink(MirrorSettings.of("redis://localhost:1", "fc", 1_000, null)));

        List<String> withCapping = cappingTasks(env);
        assertEquals(1, withCapping.size(), "one capping task: " + withCapping);
        assertTrue(
                withCapping.get(0).contains("redis-mirror"),
                "the mirror writer chained to capping: " + withCapping);
    }

    /**
     * The held topic's records ride the delivery and audit sinks (HeldNotices), in order only when
     * both are chained to the capping task: they are, and a job without chaining is refused.
     */
    @Test
    void theHeldTopicsSinksRunInTheCappingTaskAndNeedChaining() {
        for (boolean chaining : new boolean[] {true, false}) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            if (!chaining) {
                env.disableOperatorChaining();
            }
            CappingSettings settings =
                    CappingSettings.of(Traffic.config(1, 2, 6, 1))
                            .withHeldTopic((owns, others) -> HeldNotices.Start.of(List.of()));
            Runnable build = () -> buildJob(env, settings, null);
            if (!chaining) {
                var e =
                        org.junit.jupiter.api.Assertions.assertThrows(
                                IllegalArgumentException.class, build::run);
                assertTrue(e.getMessage().contains("--held-topic needs operator chaining"));
                continue;
            }
            build.run();
            List<String> withCapping = cappingTasks(env);
            assertEquals(1, withCapping.size(), "one capping task: " + withCapping);
            assertTrue(
                    withCapping.get(0).contains("deliveries")
                            && withCapping.get(0).contains("capping-audit"),
                    "both sinks chained to capping: " + withCapping);
        }
    }
}
