package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.testutils.FailOnce;
import io.freqcap.job.testutils.FailingOnceJob;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.JobOutputs.Output;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Delivery;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Held messages on a real broker, with a failure and a rescale while they wait (contract.md §5):
 * messages sent now, inside quiet hours that end a minute or two from now, are held; the job fails
 * and restarts from a checkpoint, then is stopped with a savepoint and resumed at parallelism 3,
 * all before they are due; each is then delivered exactly once, with its send time, and not before
 * it.
 */
class HeldMessagesITCase {
    static final int PARTITIONS = 3;

    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 4);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    /** Quiet (UTC) from two hours ago until {@code end}; three a day, held up to an hour. */
    static String config(Instant end) {
        return Traffic.quietHoursConfig(3, end.minusSeconds(7200), end);
    }

    /** Starts the job; {@code failAfter} records in, the first attempt fails once. */
    JobClient start(Configuration options, String config, int failAfter, String savepoint)
            throws Exception {
        StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp, savepoint);
        FailingOnceJob.failingOnceJob(env, options, failAfter, CappingSettings.of(config), null);
        return env.executeAsync("freqcap-held");
    }

    /** How many inputs get their output at once: the decision core's count of those not held. */
    static int notHeld(List<Input> inputs, String config) throws Exception {
        return (int)
                Traffic.decisionCore(inputs, config).values().stream()
                        .filter(v -> !v.isHeld())
                        .count();
    }

    @Test
    @Timeout(300)
    void heldMessagesAreDeliveredOnceAtTheirSendTimeAcrossAFailure() throws Exception {
        String name = "held";
        Instant now = Instant.now();
        // Quiet hours end at a whole minute at least 70 s away: time to fail, restart and rescale.
        Instant end = now.plusSeconds(130).truncatedTo(ChronoUnit.MINUTES);
        String config = config(end);
        Configuration options =
                KafkaPipelineSupport.jobOptions(kafka, tmp, name, config, PARTITIONS);
        Random rnd = new Random(32);
        List<Input> inputs = new ArrayList<>();
        for (int i = 0; i < 1_200; i++) {
            long user = rnd.nextInt(300);
            long t = now.toEpochMilli() - rnd.nextInt(60_000);
            String json =
                    "{\"messageId\":\"m-"
                            + i
                            + "\",\"userId\":"
                            + user
                            + ",\"channel\":\"push\",\"timestamp\":"
                            + t
                            + ",\"seq\":"
                            + i
                            + "}";
            inputs.add(
                    new Input(
                            i,
                            Long.toString(user).getBytes(StandardCharsets.UTF_8),
                            json.getBytes(StandardCharsets.UTF_8)));
        }

        FailOnce.reset();
        JobClient job = start(options, config, inputs.size() / 2, null);
        try {
            Traffic.produce(
                    kafka.bootstrapServers(),
                    name + "-in",
                    PARTITIONS,
                    inputs.subList(0, inputs.size() / 2));
            // held messages of the first half are in a checkpoint
            FailOnce.awaitCheckpoints(2, 30_000);
            Traffic.produce(
                    kafka.bootstrapServers(),
                    name + "-in",
                    PARTITIONS,
                    inputs.subList(inputs.size() / 2, inputs.size()));
            // Every message not held is decided (the failure and its restart behind us): stop
            // with a savepoint and resume at parallelism 3 while the held ones wait.
            JobOutputs.readCommitted(
                    kafka.bootstrapServers(),
                    List.of(name + "-deliveries", name + "-audit"),
                    notHeld(inputs, config),
                    Duration.ofSeconds(60));
            assertTrue(FailOnce.FAILED.get(), "the failure was injected");
            String savepoint = KafkaPipelineSupport.stopWithSavepoint(job, tmp);
            assertTrue(
                    System.currentTimeMillis() < end.toEpochMilli(),
                    "rescaled before the send time");
            List<String> args =
                    new ArrayList<>(
                            KafkaPipelineSupport.args(
                                    kafka, name, tmp.resolve(name + "-limits.json")));
            args.set(args.indexOf("--parallelism") + 1, "3");
            job =
                    start(
                            CommandLine.parse(args.toArray(new String[0]), List.of()),
                            config,
                            0,
                            savepoint);
            var out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(), name, inputs.size(), Duration.ofSeconds(200));
            assertEquals(JobStatus.RUNNING, job.getJobStatus().get());
            Map<Integer, Output> outputs =
                    JobOutputs.checkOutputs(
                            inputs, out, name, Map.of(1L, LimitConfig.parse(config)));
            long held = outputs.values().stream().filter(o -> o.sendAt() != null).count();
            assertTrue(held > 500, held + " held");
            for (ConsumerRecord<byte[], byte[]> r : out.get(name + "-deliveries")) {
                long sendAt = Long.parseLong(JobOutputs.header(r, Delivery.HEADER_SEND_AT));
                assertEquals(
                        end.toEpochMilli(), sendAt, "every one held to the end of quiet hours");
                assertTrue(r.timestamp() >= sendAt, "written at " + r.timestamp() + ", not before");
            }
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }
}
