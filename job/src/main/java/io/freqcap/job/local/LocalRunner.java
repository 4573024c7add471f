package io.freqcap.job.local;

import io.freqcap.job.CommandLine;
import io.freqcap.job.FreqcapOptions;
import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import io.freqcap.job.JobSettings;
import io.freqcap.job.KafkaHeldTopic;
import io.freqcap.job.KafkaPreflight;
import io.freqcap.job.KafkaSettings;
import io.freqcap.job.RedisPreflight;
import io.freqcap.operators.mirror.RedisConnection;
import io.freqcap.schema.config.LimitConfig;
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
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;

/**
 * Runs the job in an embedded Flink with its web UI. Started with no options it also starts a Kafka
 * broker, creates the topics, uses a sample limit config and generates campaign traffic, printing
 * progress until Ctrl-C or {@code --duration}. Given {@code --bootstrap-servers} it uses that Kafka
 * and generates nothing unless {@code --generate}. An embedded Redis ({@link EmbeddedRedis}) holds
 * the mirror unless {@code --redis} names one; with an external Kafka the mirror is on only with
 * {@code --redis}.
 *
 * <p>This class is the start and stop order of everything it runs, read top to bottom; its options
 * are {@link RunnerOptions}, the job's start {@link LocalJob}.
 */
public final class LocalRunner {
    private LocalRunner() {}

    public static void main(String[] args) throws Exception {
        if (Arrays.asList(args).contains("--help")) {
            System.out.println(
                    CommandLine.usage("bin/freqcap-local", RunnerOptions.RUNNER_OPTIONS));
            return;
        }
        RunSummary summary;
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
    public static RunSummary run(String[] args, PrintStream out, CountDownLatch stop)
            throws Exception {
        Configuration options = CommandLine.parse(args, RunnerOptions.RUNNER_OPTIONS);
        if (options.getOptional(FreqcapOptions.CHECKPOINT_INTERVAL).isEmpty()) {
            // Outputs become visible (read_committed) at each checkpoint: keep the demo lively.
            options.set(FreqcapOptions.CHECKPOINT_INTERVAL, Duration.ofSeconds(2));
        }
        boolean embedded = options.getOptional(FreqcapOptions.BOOTSTRAP_SERVERS).isEmpty();
        TempDirs.deleteLeftByKilledRuns("freqcap-local", out);
        Path work = TempDirs.createOwned("freqcap-local");
        try (StateDir state = StateDir.open(Path.of(options.get(RunnerOptions.STATE_DIR)))) {
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
        } finally {
            // Sample config and segments of this run; the state dir keeps everything else.
            TempDirs.deleteRecursively(work);
        }
    }

    /**
     * Starts what the options ask for (each in {@code resources}, which the caller closes, also
     * when the start fails half-way), then runs until stopped.
     */
    private static RunSummary run(
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
                    SampleData.segments(work, options.get(RunnerOptions.USERS)).toString());
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
            // The users' say and the sender's word (contract.md §10, §11), on by default here.
            if (options.getOptional(FreqcapOptions.PREFERENCES_TOPIC).isEmpty()) {
                options.set(FreqcapOptions.PREFERENCES_TOPIC, "user-preferences");
            }
            if (options.getOptional(FreqcapOptions.RECEIPTS_TOPIC).isEmpty()) {
                options.set(FreqcapOptions.RECEIPTS_TOPIC, "delivery-receipts");
            }
            // What waits (contract.md §12), so the closing summary can account for it.
            if (options.getOptional(FreqcapOptions.HELD_TOPIC).isEmpty()) {
                options.set(FreqcapOptions.HELD_TOPIC, "held-messages");
            }
            kafka.createCompactedTopics(
                    4,
                    List.of(
                            options.get(FreqcapOptions.PREFERENCES_TOPIC),
                            options.get(FreqcapOptions.HELD_TOPIC)));
            kafka.createTopics(4, List.of(options.get(FreqcapOptions.RECEIPTS_TOPIC)));
        }
        String bootstrap = options.get(FreqcapOptions.BOOTSTRAP_SERVERS);
        if (embedded && options.getOptional(FreqcapOptions.REDIS).isEmpty()) {
            out.println("Starting an embedded Redis ...");
            // Protected mode on and a password of its own, kept in the state dir (0600).
            Path password = EmbeddedRedis.passwordFile(state.path().resolve("redis"));
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
        if (!options.get(RunnerOptions.NO_JOB)) {
            // A Kafka the job cannot use (or a --transaction-timeout it refuses) stops the start
            // with one line, never a silent job; the embedded broker is checked too.
            commandsFrom = KafkaPreflight.check(KafkaSettings.of(options), KafkaPreflight.TIMEOUT);
            // Likewise a Redis that refuses the credentials; one merely away only delays the
            // mirror.
            RedisPreflight.check(
                    JobSettings.from(options, limits, segmentsJson).mirror(),
                    RedisPreflight.TIMEOUT);
        }
        // Held messages a resumed state dir's held topic still has: they are released or wait on,
        // beside what this run sends, before the runner stops.
        long heldBefore =
                options.get(RunnerOptions.NO_JOB)
                                || !(embedded || options.get(RunnerOptions.GENERATE))
                        ? 0
                        : Math.max(0, waiting(options));
        JobClient job =
                options.get(RunnerOptions.NO_JOB)
                        ? null
                        : LocalJob.start(options, limits, segmentsJson, commandsFrom, state, out);

        TrafficGenerator generator = null;
        if (embedded || options.get(RunnerOptions.GENERATE)) {
            generator =
                    new TrafficGenerator(
                            bootstrap,
                            KafkaSettings.clientProperties(options),
                            new TrafficGenerator.Topics(
                                    options.get(FreqcapOptions.INPUT_TOPIC),
                                    options.getOptional(FreqcapOptions.PREFERENCES_TOPIC)
                                            .orElse(null),
                                    options.getOptional(FreqcapOptions.RECEIPTS_TOPIC)
                                            .orElse(null)),
                            options.get(RunnerOptions.USERS),
                            options.get(RunnerOptions.RATE));
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
                    options.get(RunnerOptions.WEB_PORT), bootstrap);
            if (!options.get(RunnerOptions.PROMETHEUS_PORT).equals("off")) {
                out.printf(
                        "  Prometheus metrics: http://localhost:%s/metrics (the first free port)%n",
                        options.get(RunnerOptions.PROMETHEUS_PORT));
            }
        }
        out.printf(
                "  in: %s  deliveries: %s  audit: %s  config: %s  preferences: %s  receipts: %s"
                        + "  held: %s%n",
                options.get(FreqcapOptions.INPUT_TOPIC),
                options.get(FreqcapOptions.DELIVERY_TOPIC),
                options.get(FreqcapOptions.AUDIT_TOPIC),
                options.get(FreqcapOptions.CONFIG_TOPIC),
                options.getOptional(FreqcapOptions.PREFERENCES_TOPIC).orElse("-"),
                options.getOptional(FreqcapOptions.RECEIPTS_TOPIC).orElse("-"),
                options.getOptional(FreqcapOptions.HELD_TOPIC).orElse("-"));
        options.getOptional(FreqcapOptions.HELD_TOPIC)
                .ifPresent(
                        held ->
                                out.printf(
                                        "  What waits: bin/freqcap-query --held"
                                                + " --bootstrap-servers %s --held-topic %s"
                                                + " [--user 42]%n",
                                        bootstrap, held));
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
                        + options.getOptional(RunnerOptions.DURATION)
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
                                                "http://localhost:"
                                                        + options.get(RunnerOptions.WEB_PORT),
                                                job.getJobID().toString()))) {
            Duration duration =
                    options.getOptional(RunnerOptions.DURATION).orElse(Duration.ofDays(3650));
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
            // Let the job decide what was sent and a checkpoint commit it, so the summary sees it.
            if (generator != null && job != null && !status.isGloballyTerminalState()) {
                drain(out, generator.sent() + heldBefore, counter, options);
            } else {
                Thread.sleep(options.get(FreqcapOptions.CHECKPOINT_INTERVAL).toMillis() + 2000);
            }
            progress.close();
            if (job != null && !status.isGloballyTerminalState()) {
                progress.print(); // the job's metrics as they stand at its end
            }
            if (job != null && !status.isGloballyTerminalState()) {
                job.cancel().get(30, TimeUnit.SECONDS);
                status = JobStatus.CANCELED;
            }
            progress.close();
            counter.close();
            ct.join(5000);
            long redisKeys = mirror == null ? -1 : mirror.keys();
            long waiting = waiting(options);
            for (AutoCloseable r : resources) {
                r.close();
            }
            resources.clear();
            out.println("State kept in " + state.path().toAbsolutePath() + " (--state-dir)");
            RunSummary summary =
                    new RunSummary(
                            generator == null ? -1 : generator.sent(),
                            counter.snapshot(),
                            counter.segments(),
                            redisKeys,
                            waiting,
                            job == null ? null : status);
            out.println(summary.line());
            return summary;
        }
    }

    /**
     * Waits, a checkpoint at a time, until the outputs read and what waits on the held topic
     * account for {@code expected} messages (those sent, and those held before this run); gives up
     * after {@link #DRAIN_LIMIT} or once five checkpoints pass with nothing more accounted for (a
     * job that stopped deciding).
     */
    private static void drain(
            PrintStream out, long expected, OutputCounter counter, Configuration options)
            throws InterruptedException {
        long interval = options.get(FreqcapOptions.CHECKPOINT_INTERVAL).toMillis();
        long deadline = System.nanoTime() + DRAIN_LIMIT.toNanos();
        long seen = -1;
        int still = 0;
        while (System.nanoTime() < deadline && still < 5) {
            Thread.sleep(interval + 1000);
            long accounted = counter.total() + Math.max(0, waiting(options));
            if (accounted >= expected) {
                return;
            }
            still = accounted == seen ? still + 1 : 0;
            seen = accounted;
            out.printf(
                    "  %,d messages still in flight, waiting for the job ...%n",
                    expected - accounted);
        }
    }

    /** How long a stopping runner waits at most for the job to decide what it was sent. */
    static final Duration DRAIN_LIMIT = Duration.ofSeconds(60);

    /** The held topic's live keys now (what waits), or -1 without a held topic or a broker. */
    private static long waiting(Configuration options) {
        String topic = options.getOptional(FreqcapOptions.HELD_TOPIC).orElse(null);
        if (topic == null) {
            return -1;
        }
        try {
            return KafkaHeldTopic.live(
                            options.get(FreqcapOptions.BOOTSTRAP_SERVERS),
                            KafkaSettings.clientProperties(options),
                            topic,
                            Duration.ZERO,
                            key -> true)
                    .size();
        } catch (RuntimeException e) {
            return -1;
        }
    }
}
