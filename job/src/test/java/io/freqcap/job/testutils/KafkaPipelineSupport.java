package io.freqcap.job.testutils;

import io.freqcap.job.CommandLine;
import io.freqcap.job.FreqcapMain;
import io.freqcap.job.JobSettings;
import io.freqcap.job.local.LocalKafka;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.LimitConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/** A Kafka pipeline test's job: its options, its environment on a MiniCluster, and its end. */
public final class KafkaPipelineSupport {
    private KafkaPipelineSupport() {}

    /**
     * Job options for one test: topics named after it on the test's broker, {@code config} as
     * --limits, checkpoints every second, parallelism 2, plus {@code extra} options.
     */
    public static Configuration jobOptions(
            LocalKafka kafka, Path tmp, String name, String config, int partitions, String... extra)
            throws Exception {
        Path limits = Files.writeString(tmp.resolve(name + "-limits.json"), config);
        List<String> args = new ArrayList<>(args(kafka, name, limits));
        args.addAll(Arrays.asList(extra));
        Configuration c = CommandLine.parse(args.toArray(new String[0]), List.of());
        kafka.createTopics(
                partitions, List.of(name + "-in", name + "-deliveries", name + "-audit"));
        kafka.createTopics(1, List.of(name + "-config", name + "-segments"));
        return c;
    }

    /**
     * The same for a job that mirrors into the Redis at {@code redisUri}, its keys under its name.
     */
    public static Configuration mirroringJobOptions(
            LocalKafka kafka,
            Path tmp,
            String name,
            String config,
            int partitions,
            String redisUri,
            String... extra)
            throws Exception {
        List<String> args =
                new ArrayList<>(List.of("--redis", redisUri, "--redis-key-prefix", name));
        args.addAll(Arrays.asList(extra));
        return jobOptions(kafka, tmp, name, config, partitions, args.toArray(new String[0]));
    }

    /**
     * Options for a job named {@code name}: the test broker, topics and group named after it,
     * {@code limits}, checkpoints every second, parallelism 2.
     */
    public static List<String> args(LocalKafka kafka, String name, Path limits) {
        return args(kafka.bootstrapServers(), name, limits);
    }

    /** The same, for a Kafka at {@code bootstrap}. */
    public static List<String> args(String bootstrap, String name, Path limits) {
        return List.of(
                "--bootstrap-servers",
                bootstrap,
                "--group-id",
                name,
                "--input-topic",
                name + "-in",
                "--config-topic",
                name + "-config",
                "--segments-topic",
                name + "-segments",
                "--delivery-topic",
                name + "-deliveries",
                "--audit-topic",
                name + "-audit",
                "--limits",
                limits.toString(),
                "--checkpoint-interval",
                "1s",
                "--parallelism",
                "2");
    }

    /** Stops the job with a canonical savepoint under {@code tmp}; its path. */
    public static String stopWithSavepoint(JobClient job, Path tmp) throws Exception {
        return job.stopWithSavepoint(
                        false,
                        tmp.resolve("savepoints").toUri().toString(),
                        org.apache.flink.core.execution.SavepointFormatType.CANONICAL)
                .get();
    }

    /**
     * Stops the job with a savepoint once its checkpoints had time to complete with nothing in
     * flight, so that the savepoint carries no open transaction over; its path.
     */
    public static String settledSavepoint(JobClient job, Path tmp) throws Exception {
        Thread.sleep(3_000);
        return stopWithSavepoint(job, tmp);
    }

    /**
     * Copies a savepoint of held messages into {@code target} with its {@code held.json}: when the
     * messages were stamped ({@code t0}), when quiet hours ended ({@code end}) and the config,
     * which the test restoring it needs to know what to expect.
     */
    public static void copyHeldSavepoint(
            String savepoint, Path target, long t0, long end, String config)
            throws java.io.IOException {
        copySavepoint(savepoint, target);
        var meta = Json.MAPPER.createObjectNode();
        meta.put("t0", t0);
        meta.put("end", end);
        meta.put("limits", config);
        Files.writeString(target.resolve("held.json"), meta.toPrettyString() + "\n");
        System.out.println("savepoint written to " + target.toAbsolutePath());
    }

    /** Copies a savepoint's files (its {@code file:} uri) into {@code target}, a test resource. */
    public static void copySavepoint(String savepoint, Path target) throws java.io.IOException {
        Path from = Path.of(java.net.URI.create(savepoint));
        Files.createDirectories(target);
        try (java.util.stream.Stream<Path> files = Files.list(from)) {
            for (Path f : files.toList()) {
                Files.copy(
                        f,
                        target.resolve(f.getFileName()),
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    /**
     * Cancels a job and waits until it has stopped, so that nothing writes into the test's
     * temporary directory (checkpoints) while JUnit deletes it.
     */
    public static void cancel(JobClient job) throws Exception {
        job.cancel().get();
        try {
            job.getJobExecutionResult().get(60, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException cancelled) {
            // what a cancelled job's result is
        }
    }

    /** A MiniCluster for a test class: {@code taskManagers} with {@code slots} slots each. */
    public static org.apache.flink.test.junit5.MiniClusterExtension miniCluster(
            int taskManagers, int slots) {
        return miniCluster(new Configuration(), taskManagers, slots);
    }

    /** The same, with Flink settings of its own (a metric reporter's, say). */
    public static org.apache.flink.test.junit5.MiniClusterExtension miniCluster(
            Configuration flink, int taskManagers, int slots) {
        return new org.apache.flink.test.junit5.MiniClusterExtension(
                new org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration.Builder()
                        .setConfiguration(flink)
                        .setNumberTaskManagers(taskManagers)
                        .setNumberSlotsPerTaskManager(slots)
                        .build());
    }

    /** The same, restored from {@code savepoint} when it is not null. */
    public static StreamExecutionEnvironment testEnv(
            Configuration options, Path tmp, String savepoint) {
        StreamExecutionEnvironment env = testEnv(options, tmp);
        if (savepoint != null) {
            Configuration restore = new Configuration();
            restore.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
            env.configure(restore);
        }
        return env;
    }

    /** Wires the job as {@link FreqcapMain} does, under {@code config}, and starts it. */
    public static JobClient start(
            StreamExecutionEnvironment env, Configuration options, String config, String jobName)
            throws Exception {
        FreqcapMain.wireKafka(env, JobSettings.from(options, LimitConfig.parse(config), null));
        return env.executeAsync(jobName);
    }

    /** The same in a {@link #testEnv(Configuration, Path)} of its own. */
    public static JobClient startJob(Configuration options, Path tmp, String config, String jobName)
            throws Exception {
        return start(testEnv(options, tmp), options, config, jobName);
    }

    /** The job's Flink settings with checkpoints under {@code tmp} and quick restarts. */
    public static StreamExecutionEnvironment testEnv(Configuration options, Path tmp) {
        Configuration flink = FreqcapMain.flinkConfig(options);
        flink.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        flink.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                tmp.resolve("checkpoints").toUri().toString());
        flink.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        flink.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        flink.set(
                RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(500));
        return StreamExecutionEnvironment.getExecutionEnvironment(flink);
    }
}
