package io.freqcap.job.bench;

import io.freqcap.job.CommandLine;
import io.freqcap.job.FreqcapMain;
import io.freqcap.job.FreqcapOptions;
import io.freqcap.job.JobSettings;
import io.freqcap.job.local.EmbeddedKafka;
import io.freqcap.job.local.EmbeddedRedis;
import io.freqcap.job.local.KafkaBrokerProcess;
import io.freqcap.job.local.LocalKafka;
import io.freqcap.job.local.TempDirs;
import io.freqcap.schema.config.LimitConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The whole job end to end on a local broker: M messages (about 300 bytes) over N users and D days
 * of message time are produced first, then the job (exactly-once, RocksDB, parallelism 2,
 * checkpoints every 2 s) decides them, and a read_committed consumer waits for the last output.
 *
 * <p>Run: {@code mvn -q -DskipTests install && mvn -q -pl job exec:exec@e2e} (system properties
 * bench.messages, bench.users, bench.days change the workload). With {@code -Dbench.redis=true}
 * (exec:exec@e2e-redis) the Redis mirror is on, writing to a local redis-server: the run then also
 * reports when Redis held every counted message and how many writes each round trip carried.
 *
 * <p>The broker runs in a JVM of its own ({@code -Dbench.broker=jvm}: in this one). {@code
 * -Dbench.pipeline=identity} runs the machine notes' reference pipeline (keyBy + a ValueState
 * counter) instead of freqcap, in the same harness.
 */
public final class EndToEndBenchmark {
    public static void main(String[] args) throws Exception {
        int messages = Integer.getInteger("bench.messages", 3_000_000);
        int users = Integer.getInteger("bench.users", 1_000_000);
        int days = Integer.getInteger("bench.days", 10);
        int warmup = Integer.getInteger("bench.warmup", 0);
        Path work = Files.createTempDirectory("freqcap-e2e");
        boolean mirror = Boolean.getBoolean("bench.redis");
        boolean identity = "identity".equals(System.getProperty("bench.pipeline", "freqcap"));
        boolean brokerInJvm = "jvm".equals(System.getProperty("bench.broker", "process"));
        // -Dbench.workload=all: every feature on (AllFeatures); otherwise plain spread traffic.
        boolean all = "all".equals(System.getProperty("bench.workload"));
        String warmupLimits = all ? AllFeatures.LIMITS : LIMITS;
        System.out.printf(
                "pipeline %s, broker %s%n",
                identity ? "identity (keyBy + ValueState)" : "freqcap",
                brokerInJvm ? "in this JVM" : "in its own JVM");
        try (LocalKafka kafka =
                        brokerInJvm
                                ? EmbeddedKafka.start()
                                : KafkaBrokerProcess.start(work.resolve("kafka"), "2g");
                EmbeddedRedis redis =
                        mirror ? EmbeddedRedis.start(work.resolve("redis"), false) : null) {
            if (warmup > 0) {
                // The same job on other topics first: the measured run then starts on warm
                // JVMs (compiled code), as a long-running job is after its first minutes.
                System.out.printf("warm-up run, %,d messages:%n", warmup);
                run(
                        kafka,
                        redis,
                        work.resolve("warmup"),
                        "warmup-",
                        new Workload(
                                all ? ALL : "warmup",
                                warmup,
                                users,
                                days * 86_400_000L,
                                0,
                                0,
                                warmupLimits),
                        identity);
                System.out.printf("measured run, %,d messages:%n", messages);
            }
            if ("heavy".equals(System.getProperty("bench.suite"))) {
                heavySuite(kafka, redis, work);
            } else if (all) {
                System.out.println("workload all");
                Workload w =
                        new Workload(
                                ALL, messages, users, days * 86_400_000L, 0, 0, AllFeatures.LIMITS);
                run(kafka, redis, work.resolve("run"), "", w, identity);
            } else {
                // -Dbench.jvmArg=-Dbench.limits=calendar: issue 14's config (calendar limits in
                // the users' zone, a category and a campaign limit, a shadow).
                String limits =
                        "calendar".equals(System.getProperty("bench.limits"))
                                ? CALENDAR_LIMITS
                                : LIMITS;
                Workload w =
                        new Workload("spread", messages, users, days * 86_400_000L, 0, 0, limits);
                run(kafka, redis, work.resolve("run"), "", w, identity);
            }
        } finally {
            // Broker logs and checkpoints of a run take gigabytes.
            TempDirs.deleteRecursively(work);
        }
        System.exit(0);
    }

    /** The name of issue 61's workload: every feature on ({@link AllFeatures}). */
    static final String ALL = "all";

    static final String LIMITS =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"1d\",\"max\":2},{\"window\":\"7d\",\"max\":5}]}],"
                    + "\"exempt\":[\"transactional\"]}";

    static final String CALENDAR_LIMITS =
            "{\"version\":1,\"timezone\":\"Asia/Singapore\",\"rules\":[{\"segment\":\"*\","
                    + "\"limits\":[{\"calendar\":\"day\",\"max\":2},{\"calendar\":\"week\",\"max\":5}],"
                    + "\"categories\":{\"promo\":[{\"calendar\":\"week\",\"max\":2}]},"
                    + "\"campaign\":[{\"window\":\"3d\",\"max\":1}]}],"
                    + "\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"calendar\":\"day\",\"max\":1},{\"window\":\"7d\",\"max\":4}]}]},"
                    + "\"exempt\":[\"transactional\"]}";

    /** Issue 13's config: one rule, one limit, nothing ever rejected, histories kept for 180d. */
    static final String LONG_LIMITS =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"90d\",\"max\":1000000}]}]}";

    /**
     * What a run sends: {@code messages} over {@code users} users and {@code spanMillis} of message
     * time; of them a share {@code heavyShare} (0..1) from {@code heavyUsers} users whose messages
     * are 1 s apart, in time order (with heavyShare 1, every message is a heavy user's).
     */
    record Workload(
            String name,
            int messages,
            int users,
            long spanMillis,
            int heavyUsers,
            double heavyShare,
            String limits) {}

    /**
     * Issue 13's cases back to back in one run: one heavy user against the same messages spread
     * over 100,000 users, 1,000,000 heavy messages against 200,000, and 1% of traffic from 10 heavy
     * users against none.
     */
    static void heavySuite(LocalKafka kafka, EmbeddedRedis redis, Path work) throws Exception {
        long d90 = 90 * 86_400_000L;
        List<Workload> cases =
                List.of(
                        new Workload(
                                "spread-200k", 200_000, 100_000, 200_000_000L, 0, 0, LONG_LIMITS),
                        new Workload("heavy-200k", 200_000, 1, 200_000_000L, 1, 1, LONG_LIMITS),
                        new Workload("heavy-1m", 1_000_000, 1, 1_000_000_000L, 1, 1, LONG_LIMITS),
                        new Workload("spread-1m", 1_000_000, 1_000_000, d90, 0, 0, LONG_LIMITS),
                        new Workload("mixed-1m", 1_000_000, 1_000_000, d90, 10, 0.01, LONG_LIMITS),
                        new Workload(
                                "spread-200k", 200_000, 100_000, 200_000_000L, 0, 0, LONG_LIMITS),
                        new Workload("heavy-200k", 200_000, 1, 200_000_000L, 1, 1, LONG_LIMITS));
        // Warm JVMs first (compiled code), so that no case pays for the first minutes.
        run(
                kafka,
                redis,
                work.resolve("warmup"),
                "w-",
                new Workload("warm-up", 500_000, 100_000, d90, 1, 0.2, LONG_LIMITS),
                false);
        List<String> results = new java.util.ArrayList<>();
        for (int i = 0; i < cases.size(); i++) {
            Workload w = cases.get(i);
            System.out.printf("%s: %,d messages%n", w.name(), w.messages());
            double[] r = run(kafka, redis, work.resolve(w.name()), "c" + i + "-", w, false);
            results.add(
                    String.format(
                            "| %s | %,d | %.1f s | %,.0f msg/s |",
                            w.name(), w.messages(), r[0], r[1]));
        }
        System.out.println("| case | messages | first read to last output | msg/s |");
        System.out.println("|---|---|---|---|");
        results.forEach(System.out::println);
    }

    /** Returns {seconds, msg/s} from the job's first read to its last committed output. */
    private static double[] run(
            LocalKafka kafka,
            EmbeddedRedis redis,
            Path work,
            String prefix,
            Workload workload,
            boolean identity)
            throws Exception {
        long start = 1_763_769_600_000L;
        int messages = workload.messages();
        Files.createDirectories(work);
        Path limits = Files.writeString(work.resolve("limits.json"), workload.limits());
        {
            kafka.createTopics(4, List.of(prefix + "in", prefix + "deliveries", prefix + "audit"));
            kafka.createTopics(1, List.of(prefix + "config", prefix + "segments"));

            Properties pp = new Properties();
            pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            pp.put(
                    ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                    ByteArraySerializer.class.getName());
            pp.put(ProducerConfig.LINGER_MS_CONFIG, "20");
            pp.put(ProducerConfig.BATCH_SIZE_CONFIG, "262144");
            pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
            boolean all = ALL.equals(workload.name());
            List<String> featureArgs =
                    all ? AllFeatures.prepare(kafka, work, prefix, workload.users()) : List.of();
            long p0 = System.nanoTime();
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
                if (all) {
                    AllFeatures.produce(
                            producer, prefix, messages, workload.users(), workload.spanMillis());
                } else {
                    produce(producer, prefix, workload, start);
                }
            }
            double produceSeconds = (System.nanoTime() - p0) / 1e9;
            System.out.printf(
                    "produced %,d messages in %.1f s (%,.0f/s)%n",
                    messages, produceSeconds, messages / produceSeconds);

            List<String> jobArgs =
                    new java.util.ArrayList<>(
                            List.of(
                                    "--bootstrap-servers",
                                    kafka.bootstrapServers(),
                                    "--input-topic",
                                    prefix + "in",
                                    "--delivery-topic",
                                    prefix + "deliveries",
                                    "--audit-topic",
                                    prefix + "audit",
                                    "--config-topic",
                                    prefix + "config",
                                    "--segments-topic",
                                    prefix + "segments",
                                    "--group-id",
                                    prefix + "freqcap",
                                    "--limits",
                                    limits.toString(),
                                    "--starting-offsets",
                                    "earliest",
                                    "--checkpoint-interval",
                                    System.getProperty("bench.checkpoint", "2s"),
                                    "--parallelism",
                                    "2",
                                    "--history-cache",
                                    System.getProperty(
                                            "bench.historyCache",
                                            Integer.toString(
                                                    FreqcapOptions.HISTORY_CACHE.defaultValue()))));
            jobArgs.addAll(featureArgs);
            if (redis != null) {
                jobArgs.addAll(
                        List.of(
                                "--redis",
                                redis.uri(),
                                "--redis-key-prefix",
                                prefix + "freqcap:",
                                "--redis-max-backlog",
                                System.getProperty("bench.redisBacklog", "1000000")));
            }
            Configuration options = CommandLine.parse(jobArgs.toArray(new String[0]), List.of());
            LimitConfig config = JobSettings.requireJobOptions(options, true);
            Configuration flink = FreqcapMain.flinkConfig(options);
            flink.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
            flink.set(
                    CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                    work.resolve("chk").toUri().toString());
            flink.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("1g"));
            InMemoryReporter metrics = InMemoryReporter.createWithRetainedMetrics();
            metrics.addToConfiguration(flink);
            if (Boolean.getBoolean("bench.rocksdbDefaults")) {
                // Experiment: Flink's own RocksDB settings instead of freqcap's tuning.
                for (String key :
                        io.freqcap.operators.capping.state.RocksDBTuning.SETTINGS.keySet()) {
                    flink.removeKey(key);
                }
            }
            // Experiments: any -Dflink.<key>=<value> overrides a Flink setting.
            System.getProperties().stringPropertyNames().stream()
                    .filter(k -> k.startsWith("flink."))
                    .forEach(k -> flink.setString(k.substring(6), System.getProperty(k)));
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(flink);
            if (identity) {
                IdentityPipeline.wire(env, options);
            } else {
                FreqcapMain.wireKafka(env, JobSettings.from(options, config, null));
            }

            Properties cp = new Properties();
            cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            cp.put(ConsumerConfig.GROUP_ID_CONFIG, prefix + "bench-reader");
            cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            cp.put(
                    ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                    ByteArrayDeserializer.class.getName());
            cp.put(
                    ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                    ByteArrayDeserializer.class.getName());
            cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "20000");
            // The reader only counts: spare the shared CPU what a counting reader need not do.
            cp.put(ConsumerConfig.CHECK_CRCS_CONFIG, "false");
            cp.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, "1048576");
            cp.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp)) {
                consumer.subscribe(List.of(prefix + "deliveries", prefix + "audit"));
                CpuUse cpu = new CpuUse(kafka);
                RedisCost redisCost = redis == null ? null : RedisCost.start(redis);
                long submitted = System.nanoTime();
                JobClient job = env.executeAsync("freqcap-e2e");
                AtomicLong firstRead = new AtomicLong();
                Thread watcher =
                        new Thread(
                                () ->
                                        firstRead.set(
                                                awaitFirstRecord(
                                                        metrics,
                                                        job,
                                                        identity ? "KeyedProcess" : "capping")));
                watcher.setDaemon(true);
                watcher.start();
                long seen = 0;
                long delivered = 0;
                long firstOutput = 0;
                long halfway = 0;
                long halfwaySeen = 0;
                long nextReport = 0;
                long deadline = submitted + Duration.ofMinutes(15).toNanos();
                OneOutputEach check = new OneOutputEach();
                long waitingNow = 0;
                while (seen + waitingNow < messages && System.nanoTime() < deadline) {
                    var records = consumer.poll(Duration.ofMillis(200));
                    if (!records.isEmpty() && firstOutput == 0) {
                        firstOutput = System.nanoTime();
                    }
                    for (var r : records) {
                        check.output(r.value());
                    }
                    seen = check.outputs();
                    // Messages held past the wall clock wait in the job's state, not decided yet.
                    waitingNow = all ? sum(metrics, job, "heldNow") : 0;
                    if (halfway == 0 && seen >= messages / 2) {
                        halfway = System.nanoTime();
                        halfwaySeen = seen;
                    }
                    if (redis != null && System.nanoTime() > nextReport) {
                        nextReport = System.nanoTime() + 5_000_000_000L;
                        System.out.printf(
                                "  %.0f s: %,d decided, mirror backlog %,d%n",
                                (System.nanoTime() - submitted) / 1e9,
                                seen,
                                sum(metrics, job, "redisBacklog"));
                    }
                    for (var r : records.records(prefix + "deliveries")) {
                        delivered++;
                    }
                }
                long done = System.nanoTime();
                if (seen + waitingNow < messages) {
                    throw new IllegalStateException(
                            String.format(
                                    "check failed: %,d of %,d messages decided or waiting after"
                                            + " 15 minutes",
                                    seen + waitingNow, messages));
                }
                verify(
                        check,
                        consumer,
                        kafka,
                        all ? prefix + "held" : null,
                        messages,
                        options.get(FreqcapOptions.CHECKPOINT_INTERVAL));
                if (redis != null) {
                    // Every delivery here is ALLOWED (nothing exempt). Each user's key is written
                    // within 100 ms of its change: Redis holds every counted message once the
                    // backlog is empty twice, 150 ms apart.
                    int empty = 0;
                    while (empty < 2
                            && System.nanoTime() < done + Duration.ofMinutes(5).toNanos()) {
                        Thread.sleep(150);
                        empty = sum(metrics, job, "redisBacklog") == 0 ? empty + 1 : 0;
                    }
                    double mirrored = (System.nanoTime() - submitted) / 1e9;
                    long writes = sum(metrics, job, "redisWrites");
                    long flushes = sum(metrics, job, "redisFlushes");
                    System.out.printf(
                            "mirror: all in Redis %.1f s after submit (%,.0f msg/s);"
                                    + " %,d keys written in %,d flushes = %.0f per round trip%n",
                            mirrored,
                            seen / mirrored,
                            writes,
                            flushes,
                            (double) writes / Math.max(1, flushes));
                    redisCost.report(delivered);
                }
                cpu.report(seen);
                if (!identity) {
                    System.out.printf(
                            "history cache: %,d hits of %,d messages (--history-cache %,d)%n",
                            sum(metrics, job, "historyCacheHits"),
                            seen,
                            options.get(FreqcapOptions.HISTORY_CACHE));
                }
                job.cancel().get();
                if (redisCost != null) {
                    // The seed's design on the same redis-server, the same users and times.
                    redisCost.slidingLogBeside(workload, start);
                }
                double total = (done - submitted) / 1e9;
                double fromRead = (done - firstRead.get()) / 1e9;
                double steady = (done - firstOutput) / 1e9;
                System.out.printf(
                        "decided %,d of %,d (%,d delivered) | first read->last committed output"
                                + " %.1f s = %,.0f msg/s | submit->last %.1f s = %,.0f msg/s"
                                + " | first->last committed output %.1f s = %,.0f msg/s%n",
                        seen,
                        messages,
                        delivered,
                        fromRead,
                        seen / fromRead,
                        total,
                        seen / total,
                        steady,
                        seen / steady);
                System.out.printf(
                        "second half of the outputs: %,.0f msg/s%n",
                        (seen - halfwaySeen) / ((done - halfway) / 1e9));
                return new double[] {fromRead, seen / fromRead};
            }
        }
    }

    /** The spread and heavy workloads' messages, on {@code prefix + "in"}. */
    private static void produce(
            KafkaProducer<byte[], byte[]> producer, String prefix, Workload workload, long start) {
        Random rnd = new Random(42);
        int messages = workload.messages();
        double step = (double) workload.spanMillis() / messages;
        long[] heavyClock = new long[workload.heavyUsers()];
        for (int i = 0; i < messages; i++) {
            long user;
            long t;
            if (workload.heavyUsers() > 0
                    && (workload.heavyShare() >= 1 || rnd.nextDouble() < workload.heavyShare())) {
                int k = rnd.nextInt(workload.heavyUsers());
                user = workload.users() + k; // apart from the spread users
                t = start + 1000 * heavyClock[k]++;
            } else {
                user = rnd.nextInt(workload.users());
                t = start + (long) (i * step) + rnd.nextInt(3_600_000);
            }
            String v =
                    "{\"messageId\":\"m-"
                            + i
                            + "\",\"userId\":"
                            + user
                            + ",\"channel\":\""
                            + (i % 3 == 0 ? "email" : "push")
                            + "\",\"category\":\"marketing\",\"campaignId\":\"spring-sale-2026\","
                            + "\"timestamp\":"
                            + t
                            + ",\"payload\":{\"title\":\"20% off rides this weekend\","
                            + "\"body\":\"Ride anywhere in town for less, this weekend only.\","
                            + "\"deeplink\":\"app://promo/spring?src=push&id="
                            + i
                            + "\"}}";
            producer.send(
                    new ProducerRecord<>(
                            prefix + "in",
                            Long.toString(user).getBytes(StandardCharsets.UTF_8),
                            v.getBytes(StandardCharsets.UTF_8)));
        }
    }

    /**
     * Checks that every message has its one output or waits on the held topic (reading outputs a
     * little longer while the two disagree: the held topic's tombstones and the outputs commit
     * together), and stops the benchmark with the problem otherwise.
     */
    private static void verify(
            OneOutputEach check,
            KafkaConsumer<byte[], byte[]> consumer,
            LocalKafka kafka,
            String heldTopic,
            int messages,
            Duration checkpointInterval) {
        // Outputs and the held topic's tombstones commit at checkpoints: a few of them.
        long giveUp =
                System.nanoTime()
                        + Duration.ofSeconds(60).plus(checkpointInterval.multipliedBy(3)).toNanos();
        while (true) {
            java.util.Collection<byte[]> waiting =
                    heldTopic == null
                            ? List.of()
                            : io.freqcap.job.KafkaHeldTopic.live(
                                            kafka.bootstrapServers(),
                                            java.util.Map.of(),
                                            heldTopic,
                                            Duration.ZERO,
                                            key -> true)
                                    .values();
            String problems = check.problems(messages, waiting);
            if (problems == null) {
                System.out.println(
                        "check: every message has its one output: " + check.summary(waiting));
                return;
            }
            if (System.nanoTime() > giveUp) {
                throw new IllegalStateException("check failed: " + problems);
            }
            for (var r : consumer.poll(Duration.ofSeconds(2))) {
                check.output(r.value());
            }
        }
    }

    /**
     * When the keyed operator (capping, or the identity counter) took its first record: the job's
     * first read, give or take a network buffer.
     */
    static long awaitFirstRecord(InMemoryReporter metrics, JobClient job, String operator) {
        while (true) {
            long in = 0;
            for (var group : metrics.findOperatorMetricGroups(job.getJobID(), operator)) {
                var io = group.getIOMetricGroup();
                in += io == null ? 0 : io.getNumRecordsInCounter().getCount();
            }
            if (in > 0) {
                return System.nanoTime();
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                return System.nanoTime();
            }
        }
    }

    static long sum(InMemoryReporter metrics, JobClient job, String name) {
        long sum = 0;
        for (var m : metrics.findMetrics(job.getJobID(), name).values()) {
            sum +=
                    m instanceof org.apache.flink.metrics.Counter c
                            ? c.getCount()
                            : ((Number) ((org.apache.flink.metrics.Gauge<?>) m).getValue())
                                    .longValue();
        }
        return sum;
    }
}
