package io.freqcap.job.local;

import io.freqcap.job.CommandLine;
import io.freqcap.job.FreqcapMain;
import io.freqcap.job.FreqcapOptions;
import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import io.freqcap.job.JobSettings;
import io.freqcap.job.KafkaPreflight;
import io.freqcap.job.KafkaSettings;
import io.freqcap.job.RedisPreflight;
import io.freqcap.operators.mirror.RedisConnection;
import io.freqcap.schema.config.LimitConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Runs the job in an embedded Flink with its web UI. Started with no options it also starts a Kafka
 * broker, creates the topics, uses a sample limit config and generates campaign traffic, printing
 * progress until Ctrl-C or {@code --duration}. Given {@code --bootstrap-servers} it uses that Kafka
 * and generates nothing unless {@code --generate}. An embedded Redis ({@link EmbeddedRedis}) holds
 * the mirror unless {@code --redis} names one; with an external Kafka the mirror is on only with
 * {@code --redis}.
 *
 * <p>Why one long class: the runner's options and the start and stop order of everything it runs,
 * read top to bottom.
 */
public final class LocalRunner {
    private LocalRunner() {}

    public static final ConfigOption<Duration> DURATION =
            ConfigOptions.key("duration")
                    .durationType()
                    .noDefaultValue()
                    .withDescription("Stop after this long (e.g. 60s); default: run until Ctrl-C.");
    public static final ConfigOption<Integer> USERS =
            ConfigOptions.key("users")
                    .intType()
                    .defaultValue(100_000)
                    .withDescription("Generator: number of users.");
    public static final ConfigOption<Integer> RATE =
            ConfigOptions.key("rate")
                    .intType()
                    .defaultValue(2_000)
                    .withDescription("Generator: messages per second.");
    public static final ConfigOption<Boolean> GENERATE =
            ConfigOptions.key("generate")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription("Generate traffic also into an external Kafka.");
    public static final ConfigOption<Integer> WEB_PORT =
            ConfigOptions.key("web-port")
                    .intType()
                    .defaultValue(8081)
                    .withDescription("Port of the Flink web UI and REST API.");

    public static final ConfigOption<String> PROMETHEUS_PORT =
            ConfigOptions.key("prometheus-port")
                    .stringType()
                    .defaultValue("9249-9259")
                    .withDescription(
                            "Port (or range) of Flink's Prometheus reporter: the job's metrics at"
                                    + " http://localhost:<port>/metrics; off for none.");

    public static final ConfigOption<String> STATE_DIR =
            ConfigOptions.key("state-dir")
                    .stringType()
                    .defaultValue("./freqcap-state")
                    .withDescription(
                            "Where the runner keeps its checkpoints (and, with the embedded Kafka"
                                    + " and Redis, their data); started again with the same"
                                    + " directory it resumes from its latest checkpoint.");

    public static final ConfigOption<Boolean> NO_JOB =
            ConfigOptions.key("no-job")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "Start Kafka, Redis, the topics and the traffic only; the job runs"
                                    + " elsewhere (bin/freqcap-cluster submit).");

    static final List<ConfigOption<?>> RUNNER_OPTIONS =
            List.of(DURATION, USERS, RATE, GENERATE, WEB_PORT, PROMETHEUS_PORT, STATE_DIR, NO_JOB);

    /**
     * What a run did, for its closing summary.
     *
     * @param finalStatus the job's, or null when the run had none ({@code --no-job})
     */
    public record Summary(
            long sent,
            Map<String, Long> decisions,
            Map<String, Long> segments,
            long redisKeys,
            JobStatus finalStatus) {

        /**
         * Why the run did not do its job, or null when it did: its job failed, or never decided
         * anything (a job restarting for ever, say), which must not end with exit code 0.
         */
        public String failure() {
            if (finalStatus == null) {
                return null;
            }
            if (finalStatus == JobStatus.FAILED) {
                return "the job failed (its log above says why)";
            }
            long decided = decisions.values().stream().mapToLong(Long::longValue).sum();
            if (decided == 0) {
                return "the job decided nothing: no record reached the delivery or audit topic"
                        + (sent > 0 ? " of the " + sent + " messages sent" : "")
                        + " (its log above says why)";
            }
            return null;
        }
    }

    public static void main(String[] args) throws Exception {
        if (Arrays.asList(args).contains("--help")) {
            System.out.println(CommandLine.usage("bin/freqcap-local", RUNNER_OPTIONS));
            return;
        }
        Summary summary;
        try {
            summary = run(args, System.out, null);
        } catch (InvalidOptionException e) {
            System.err.println("freqcap: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (summary.failure() != null) {
            System.err.println("freqcap: " + summary.failure());
            System.exit(1);
        }
        System.exit(0);
    }

    /**
     * Runs until {@code --duration} passes, {@code stop} counts down, or the JVM is asked to stop.
     *
     * @param stop an extra way to stop the run (tests); may be null
     */
    public static Summary run(String[] args, PrintStream out, CountDownLatch stop)
            throws Exception {
        Configuration options = CommandLine.parse(args, RUNNER_OPTIONS);
        if (options.getOptional(FreqcapOptions.CHECKPOINT_INTERVAL).isEmpty()) {
            // Outputs become visible (read_committed) at each checkpoint: keep the demo lively.
            options.set(FreqcapOptions.CHECKPOINT_INTERVAL, Duration.ofSeconds(2));
        }
        boolean embedded = options.getOptional(FreqcapOptions.BOOTSTRAP_SERVERS).isEmpty();
        TempDirs.deleteLeftByKilledRuns("freqcap-local", out);
        Path work = TempDirs.createOwned("freqcap-local");
        try (StateDir state = StateDir.open(Path.of(options.get(STATE_DIR)))) {
            return run(options, embedded, work, state, out, stop);
        } finally {
            // Sample config and segments of this run; the state dir keeps everything else.
            TempDirs.deleteRecursively(work);
        }
    }

    private static Summary run(
            Configuration options,
            boolean embedded,
            Path work,
            StateDir state,
            PrintStream out,
            CountDownLatch stop)
            throws Exception {
        List<AutoCloseable> resources = new ArrayList<>();
        try {
            return run(options, embedded, work, state, out, stop, resources);
        } finally {
            // Also when the start fails half-way: no broker or Redis outlives the runner.
            for (AutoCloseable r : resources) {
                try {
                    r.close();
                } catch (Exception e) {
                    out.println("freqcap: stopping " + r + ": " + e);
                }
            }
        }
    }

    private static Summary run(
            Configuration options,
            boolean embedded,
            Path work,
            StateDir state,
            PrintStream out,
            CountDownLatch stop,
            List<AutoCloseable> resources)
            throws Exception {
        if (options.getOptional(FreqcapOptions.LIMITS).isEmpty()) {
            options.set(FreqcapOptions.LIMITS, SampleData.limits(work).toString());
        }
        if (embedded && options.getOptional(FreqcapOptions.SEGMENTS).isEmpty()) {
            options.set(
                    FreqcapOptions.SEGMENTS,
                    SampleData.segments(work, options.get(USERS)).toString());
        }
        LimitConfig limits = JobSettings.requireJobOptions(options, false);
        String segmentsJson = JobSettings.readSegments(options);

        LocalKafka kafka = null;
        if (embedded) {
            out.println("Starting a Kafka broker (KRaft, its own JVM) ...");
            kafka = KafkaBrokerProcess.start(state.path().resolve("kafka"), "1g");
            resources.add(kafka);
            options.set(FreqcapOptions.BOOTSTRAP_SERVERS, kafka.bootstrapServers());
            kafka.createTopics(
                    4,
                    List.of(
                            options.get(FreqcapOptions.INPUT_TOPIC),
                            options.get(FreqcapOptions.DELIVERY_TOPIC),
                            options.get(FreqcapOptions.AUDIT_TOPIC)));
            kafka.createTopics(
                    1,
                    List.of(
                            options.get(FreqcapOptions.CONFIG_TOPIC),
                            options.get(FreqcapOptions.SEGMENTS_TOPIC)));
        }
        String bootstrap = options.get(FreqcapOptions.BOOTSTRAP_SERVERS);
        if (embedded && options.getOptional(FreqcapOptions.REDIS).isEmpty()) {
            out.println("Starting an embedded Redis ...");
            // Protected mode on and a password of its own, kept in the state dir (0600).
            Path password = redisPassword(state.path().resolve("redis"));
            EmbeddedRedis redis =
                    EmbeddedRedis.start(
                            state.path().resolve("redis"),
                            true,
                            new EmbeddedRedis.Secured(
                                    "default", Files.readString(password).strip(), null));
            resources.add(redis);
            options.set(FreqcapOptions.REDIS, redis.uri());
            options.set(FreqcapOptions.REDIS_PASSWORD_FILE, password.toString());
        }
        MirrorProgress mirror =
                options.getOptional(FreqcapOptions.REDIS)
                        .map(
                                uri ->
                                        new MirrorProgress(
                                                uri,
                                                options.getOptional(
                                                                FreqcapOptions.REDIS_PASSWORD_FILE)
                                                        .orElse(null)))
                        .orElse(null);
        if (mirror != null) {
            resources.add(0, mirror);
        }

        Map<Integer, Long> commandsFrom = Map.of();
        if (!options.get(NO_JOB)) {
            // A Kafka the job cannot use (or a --transaction-timeout it refuses) stops the start
            // with one line, never a silent job; the embedded broker is checked too.
            commandsFrom = KafkaPreflight.check(KafkaSettings.of(options), KafkaPreflight.TIMEOUT);
            // Likewise a Redis that refuses the credentials; one merely away only delays the
            // mirror.
            RedisPreflight.check(
                    JobSettings.from(options, limits, segmentsJson).mirror(),
                    RedisPreflight.TIMEOUT);
        }
        JobClient job =
                options.get(NO_JOB)
                        ? null
                        : startJob(options, limits, segmentsJson, commandsFrom, state, out);

        TrafficGenerator generator = null;
        if (embedded || options.get(GENERATE)) {
            generator =
                    new TrafficGenerator(
                            bootstrap,
                            KafkaSettings.clientProperties(options),
                            options.get(FreqcapOptions.INPUT_TOPIC),
                            options.get(USERS),
                            options.get(RATE));
            Thread t = new Thread(generator, "freqcap-generator");
            t.setDaemon(true);
            t.start();
        }
        OutputCounter counter =
                new OutputCounter(
                        bootstrap,
                        KafkaSettings.clientProperties(options),
                        options.get(FreqcapOptions.DELIVERY_TOPIC),
                        options.get(FreqcapOptions.AUDIT_TOPIC));
        Thread ct = new Thread(counter, "freqcap-progress");
        ct.setDaemon(true);
        ct.start();

        if (job == null) {
            out.printf(
                    "Kafka, Redis and traffic are running, no job (--no-job). Kafka: %s%n",
                    bootstrap);
        } else {
            out.printf(
                    "freqcap is running. Flink web UI: http://localhost:%d  Kafka: %s%n",
                    options.get(WEB_PORT), bootstrap);
            if (!options.get(PROMETHEUS_PORT).equals("off")) {
                out.printf(
                        "  Prometheus metrics: http://localhost:%s/metrics (the first free port)%n",
                        options.get(PROMETHEUS_PORT));
            }
        }
        out.printf(
                "  in: %s  deliveries: %s  audit: %s  config: %s%n",
                options.get(FreqcapOptions.INPUT_TOPIC),
                options.get(FreqcapOptions.DELIVERY_TOPIC),
                options.get(FreqcapOptions.AUDIT_TOPIC),
                options.get(FreqcapOptions.CONFIG_TOPIC));
        if (mirror != null) {
            String shown = RedisConnection.redact(mirror.uri());
            out.printf(
                    "  Redis mirror: %s  (bin/freqcap-query --redis %s%s --user 42)%n",
                    shown,
                    shown,
                    mirror.passwordFile() == null
                            ? ""
                            : " --redis-password-file " + mirror.passwordFile());
        }
        out.println(
                "  Ctrl-C stops everything"
                        + options.getOptional(DURATION)
                                .map(d -> " (or after " + d.toSeconds() + "s)")
                                .orElse(""));

        try (StopSignal signal = new StopSignal(stop);
                ProgressLine progress =
                        new ProgressLine(
                                out,
                                generator,
                                counter,
                                mirror,
                                job == null
                                        ? null
                                        : new HeldProgress(
                                                "http://localhost:" + options.get(WEB_PORT),
                                                job.getJobID().toString()))) {
            Duration duration = options.getOptional(DURATION).orElse(Duration.ofDays(3650));
            long deadline = System.nanoTime() + duration.toNanos();
            JobStatus status = job == null ? JobStatus.RUNNING : job.getJobStatus().get();
            while (!signal.requested() && System.nanoTime() < deadline) {
                signal.await(500);
                status = job == null ? JobStatus.RUNNING : job.getJobStatus().get();
                if (status.isGloballyTerminalState()) {
                    out.println("The job ended: " + status);
                    break;
                }
            }

            out.println("Stopping ...");
            if (generator != null) {
                generator.stop();
            }
            // Let the last checkpoint commit what was decided, so the summary sees it.
            Thread.sleep(options.get(FreqcapOptions.CHECKPOINT_INTERVAL).toMillis() + 2000);
            if (job != null && !status.isGloballyTerminalState()) {
                job.cancel().get(30, TimeUnit.SECONDS);
                status = JobStatus.CANCELED;
            }
            progress.close();
            counter.close();
            ct.join(5000);
            long redisKeys = mirror == null ? -1 : mirror.keys();
            for (AutoCloseable r : resources) {
                r.close();
            }
            resources.clear();
            out.println("State kept in " + state.path().toAbsolutePath() + " (--state-dir)");
            Summary summary =
                    new Summary(
                            generator == null ? -1 : generator.sent(),
                            counter.snapshot(),
                            counter.segments(),
                            redisKeys,
                            job == null ? null : status);
            out.printf(
                    "Summary: sent %,d; decisions read back %s; deliveries by segment %s;%s job %s%n",
                    summary.sent(),
                    summary.decisions(),
                    summary.segments(),
                    redisKeys < 0 ? "" : " Redis mirror keys " + redisKeys + ";",
                    status);
            return summary;
        }
    }

    /** The embedded Redis' password file: made once per state dir, readable by its owner only. */
    static Path redisPassword(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path file = dir.resolve("password");
        if (!Files.exists(file)) {
            byte[] random = new byte[24];
            new java.security.SecureRandom().nextBytes(random);
            Files.writeString(
                    file,
                    java.util.HexFormat.of().formatHex(random) + "\n",
                    java.nio.file.StandardOpenOption.CREATE_NEW);
            try {
                Files.setPosixFilePermissions(
                        file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException notPosix) {
                // a file system without POSIX permissions: the state dir's own protection
            }
        }
        return file;
    }

    /**
     * Turns on Flink's Prometheus metrics (deploy/config.yaml's names and labels, segment ids such
     * as {@code *} kept as they are in labels), served on the loopback interface only.
     *
     * @param port a port or a range ({@code 9249-9259})
     */
    public static void prometheus(Configuration flink, String port) {
        String prefix = "metrics.reporter.prom.";
        flink.setString(
                prefix + "factory.class", LoopbackPrometheusReporter.Factory.class.getName());
        flink.setString(prefix + "port", port);
        flink.setString(prefix + "filterLabelValueCharacters", "false");
    }

    /** The job in an embedded Flink with its web UI, resumed from the state dir if it can be. */
    private static JobClient startJob(
            Configuration options,
            LimitConfig limits,
            String segmentsJson,
            Map<Integer, Long> commandsFrom,
            StateDir state,
            PrintStream out)
            throws Exception {
        Configuration flink = FreqcapMain.flinkConfig(options);
        flink.set(RestOptions.PORT, options.get(WEB_PORT));
        // Every server of the embedded Flink on loopback: REST and web UI, the blob server (the
        // JobManager's bind host), the TaskManager's data port.
        flink.set(RestOptions.BIND_ADDRESS, "localhost");
        flink.set(JobManagerOptions.BIND_HOST, "localhost");
        flink.set(TaskManagerOptions.BIND_HOST, "localhost");
        if (!options.get(PROMETHEUS_PORT).equals("off")) {
            prometheus(flink, options.get(PROMETHEUS_PORT));
        }
        flink.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        Resumption resumption = Resumption.prepare(state, flink, out);
        if (options.getOptional(FreqcapOptions.PARALLELISM).isEmpty()) {
            flink.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        }
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.createLocalEnvironmentWithWebUI(flink);
        FreqcapMain.wireKafka(
                env,
                JobSettings.from(options, limits, segmentsJson).withCommandsFrom(commandsFrom));
        JobClient job = resumption.submit(env, "freqcap (local)");
        return job;
    }
}
