package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.cluster.ClusterCommand;
import io.freqcap.job.cluster.FlinkRest;
import io.freqcap.job.cluster.JobSubmission;
import io.freqcap.job.cluster.StandaloneCluster;
import io.freqcap.job.local.EmbeddedRedis;
import io.freqcap.job.local.KafkaBrokerProcess;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.JobOutputs.Output;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.segment.SegmentBitmap;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * freqcap as users run it: the shaded job jar submitted over REST to a session cluster of a
 * JobManager and two TaskManagers in JVMs of their own ({@link StandaloneCluster}, as {@code
 * bin/freqcap-cluster} starts it), a Kafka broker in its own JVM, a redis-server. Mid-stream a
 * TaskManager is killed with SIGKILL and a replacement started; later the job is stopped with a
 * savepoint at parallelism 2 and resumed from it at 3. Every input has exactly one read_committed
 * output, each the decision the decision core makes over the inputs with the config and segments in
 * force (a job that never failed), and the Redis mirror holds exactly what was counted.
 */
class ClusterITCase {
    static final int USERS = 50_000;
    static final int PHASE_A = 150_000;
    static final int PHASE_B = 150_000;
    static final int PHASE_C = 60_000;
    static final String CONFIG_V1 = Traffic.config(1, 3, 10, 1);

    /** Version 2: tighter caps, and a rule of its own for the vip segment. */
    static final String CONFIG_V2 =
            "{\"version\":2,\"rules\":["
                    + "{\"segment\":\"vip\",\"limits\":[{\"window\":\"1d\",\"max\":1},"
                    + "{\"window\":\"7d\",\"max\":4}]},"
                    + "{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":2},"
                    + "{\"window\":\"7d\",\"max\":8}],"
                    + "\"channels\":{\"email\":[{\"window\":\"1d\",\"max\":1}]}}],"
                    + "\"exempt\":[\"transactional\"]}";

    /** Users 0..4,999 are vip from config version 2 on. */
    static final long VIPS = 5_000;

    @TempDir Path tmp;

    @Test
    @Timeout(420)
    void aKilledTaskManagerAndARescaleThroughASavepointChangeNoDecision() throws Exception {
        String name = "cluster";
        Path jar = shadedJar();
        try (KafkaBrokerProcess kafka = KafkaBrokerProcess.start(tmp.resolve("kafka"), "768m");
                EmbeddedRedis redis = EmbeddedRedis.start(tmp.resolve("redis"), false)) {
            kafka.createTopics(4, List.of(name + "-in", name + "-deliveries", name + "-audit"));
            kafka.createTopics(1, List.of(name + "-config", name + "-segments"));
            StandaloneCluster cluster =
                    StandaloneCluster.prepare(
                            new StandaloneCluster.Settings(
                                    tmp.resolve("cluster"),
                                    Path.of("target", "freqcap-local", "lib"),
                                    Path.of("..", "deploy", "config.yaml"),
                                    io.freqcap.job.local.LocalRunnerITCase.freePort(),
                                    "2g",
                                    false));
            try {
                cluster.startJobManager();
                cluster.startTaskManager();
                cluster.startTaskManager();
                FlinkRest rest = new FlinkRest(cluster.restUrl());
                ClusterCommand.awaitTaskManagers(rest, 2, Duration.ofSeconds(90));

                Path limits = Files.writeString(tmp.resolve("limits.json"), CONFIG_V1);
                List<String> args = new ArrayList<>(KafkaPipelineSupport.args(kafka, name, limits));
                // 2 GB TaskManagers: the history cache sizes itself to their heap
                args.addAll(List.of("--redis", redis.uri(), "--redis-key-prefix", name));
                // bin/freqcap-cluster's clusters take no uploaded jars: the graph is sent instead.
                assertEquals(404, status(cluster.restUrl() + "/jars"), "web submission is off");
                String job = JobSubmission.submit(cluster.restUrl(), jar, args, null);
                awaitState(rest, job, "RUNNING");

                List<Input> all = Traffic.traffic(15, PHASE_A + PHASE_B + PHASE_C, USERS, 12);
                List<Input> a = all.subList(0, PHASE_A);
                List<Input> b = all.subList(PHASE_A, PHASE_A + PHASE_B);
                List<Input> c = all.subList(PHASE_A + PHASE_B, all.size());
                String bootstrap = kafka.bootstrapServers();
                try (OutputWatch watch = new OutputWatch(bootstrap, name)) {
                    Traffic.produce(bootstrap, name + "-in", 4, a);
                    watch.await(a.size(), Duration.ofSeconds(120));

                    // Live control records between the phases: a new config and a segment.
                    Traffic.send(bootstrap, name + "-config", CONFIG_V2);
                    Traffic.send(bootstrap, name + "-segments", vipSegment());
                    awaitControl(cluster.restUrl(), job, 2, 1, Duration.ofSeconds(60));

                    Traffic.produce(bootstrap, name + "-in", 4, b);
                    watch.await(a.size() + b.size() / 3, Duration.ofSeconds(120));
                    long killedAt = System.currentTimeMillis();
                    int atKill = watch.count();
                    cluster.kill("taskmanager-1");
                    cluster.startTaskManager(); // the replacement
                    long runningAgain = awaitRestarted(rest, job);
                    watch.await(a.size() + b.size(), Duration.ofSeconds(180));
                    long detected =
                            rest.exceptions(job)
                                    .path("exceptionHistory")
                                    .path("entries")
                                    .path(0)
                                    .path("timestamp")
                                    .asLong();
                    System.out.printf(
                            "cluster: TaskManager killed after %,d outputs; failure noticed %.1f s"
                                    + " later, job running again after %.1f s, first output"
                                    + " committed after that %.1f s after the kill%n",
                            atKill,
                            (detected - killedAt) / 1e3,
                            (runningAgain - killedAt) / 1e3,
                            (watch.firstAfter(runningAgain) - killedAt) / 1e3);
                }
                List<Input> ab = all.subList(0, PHASE_A + PHASE_B);
                Map<Integer, Output> outputs = check(bootstrap, name, ab);
                RedisMirrorITCase.awaitMirror(
                        redis.uri(), name, RedisMirrorITCase.expectedMirror(ab, outputs, name));
                assertTrue(
                        rest.exceptions(job).path("exceptionHistory").path("entries").size() > 0,
                        "the TaskManager's loss is in the job's exception history");

                // Stop with a savepoint at parallelism 2, resume at 3.
                long stopStart = System.nanoTime();
                String savepoint = rest.stopWithSavepoint(job, null, Duration.ofMinutes(2));
                awaitState(rest, job, "FINISHED");
                System.out.printf(
                        "cluster: stop-with-savepoint %.1f s, savepoint %,d bytes at %s%n",
                        (System.nanoTime() - stopStart) / 1e9, bytes(savepoint), savepoint);
                List<String> rescaled = new ArrayList<>(args);
                int p = rescaled.indexOf("--parallelism");
                rescaled.set(p + 1, "3");
                superviseTaskManagers(cluster, rest, 2);
                String resumed = JobSubmission.submit(cluster.restUrl(), jar, rescaled, savepoint);
                awaitState(rest, resumed, "RUNNING");
                assertEquals(3, maxParallelismOfVertices(rest, resumed));
                Traffic.produce(bootstrap, name + "-in", 4, c);
                outputs = check(bootstrap, name, all);
                RedisMirrorITCase.awaitMirror(
                        redis.uri(), name, RedisMirrorITCase.expectedMirror(all, outputs, name));
                rest.cancel(resumed);
                awaitState(rest, resumed, "CANCELED");
            } finally {
                cluster.stop();
                keepLogs(cluster.dir().resolve("log"));
            }
        }
    }

    /**
     * Waits until every capping task has config {@code version} in force and at least {@code
     * segments} segments (the gauges configVersion and segments, through the REST API).
     */
    static void awaitControl(String rest, String job, long version, long segments, Duration timeout)
            throws Exception {
        String base = rest + "/jobs/" + job;
        String vertex = null;
        for (JsonNode v : json(base).path("vertices")) {
            if (v.path("name").asText().startsWith("capping")) {
                vertex = v.path("id").asText();
            }
        }
        assertTrue(vertex != null, "no capping vertex in " + json(base));
        String url =
                base
                        + "/vertices/"
                        + vertex
                        + "/subtasks/metrics?get=capping.configVersion,capping.segments";
        long deadline = System.nanoTime() + timeout.toNanos();
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            last = json(url);
            Map<String, Double> min = new java.util.HashMap<>();
            last.forEach(m -> min.put(m.path("id").asText(), m.path("min").asDouble()));
            if (min.getOrDefault("capping.configVersion", 0.0) >= version
                    && min.getOrDefault("capping.segments", 0.0) >= segments) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("control records not in force after " + timeout + ": " + last);
    }

    static JsonNode json(String url) throws Exception {
        String body =
                java.net.http.HttpClient.newHttpClient()
                        .send(
                                java.net.http.HttpRequest.newBuilder(java.net.URI.create(url))
                                        .build(),
                                java.net.http.HttpResponse.BodyHandlers.ofString())
                        .body();
        return new com.fasterxml.jackson.databind.ObjectMapper().readTree(body);
    }

    /** The HTTP status of a GET. */
    static int status(String url) throws Exception {
        return java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(url)).build(),
                        java.net.http.HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    /** Reads every output and checks them against the decision core (see the class comment). */
    static Map<Integer, Output> check(String bootstrap, String name, List<Input> inputs)
            throws Exception {
        var out = JobOutputs.readOutputs(bootstrap, name, inputs.size(), Duration.ofSeconds(180));
        Map<Integer, Output> outputs =
                JobOutputs.checkOutputs(
                        inputs,
                        out.get(name + "-deliveries"),
                        out.get(name + "-audit"),
                        Map.of(1L, LimitConfig.parse(CONFIG_V1), 2L, LimitConfig.parse(CONFIG_V2)),
                        (user, version) -> version >= 2 && user < VIPS ? "vip" : "*");
        // A job that never failed applies version 2 to every message after the pause.
        for (int i = PHASE_A; i < inputs.size(); i++) {
            Output o = outputs.get(inputs.get(i).seq);
            if (!o.decision().equals("MALFORMED")) {
                assertEquals(2, o.configVersion(), "config of input " + inputs.get(i).seq);
            }
        }
        for (int i = 0; i < PHASE_A; i++) {
            Output o = outputs.get(inputs.get(i).seq);
            if (!o.decision().equals("MALFORMED")) {
                assertEquals(1, o.configVersion(), "config of input " + inputs.get(i).seq);
            }
        }
        return outputs;
    }

    static String vipSegment() throws Exception {
        String bitmap =
                Base64.getEncoder()
                        .encodeToString(
                                SegmentBitmap.of(LongStream.range(0, VIPS).toArray())
                                        .write(SegmentBitmap.Format.ROARING32));
        return "{\"segmentId\":\"vip\",\"version\":1,\"priority\":10,\"format\":\"roaring32\","
                + "\"bitmap\":\""
                + bitmap
                + "\"}";
    }

    static Path shadedJar() throws Exception {
        try (Stream<Path> files = Files.list(Path.of("target"))) {
            return files.filter(
                            f -> {
                                String n = f.getFileName().toString();
                                return n.startsWith("freqcap-job-") && n.endsWith(".jar");
                            })
                    .findFirst()
                    .orElseThrow(
                            () ->
                                    new IllegalStateException(
                                            "no shaded job jar in target/: run mvn verify, which"
                                                    + " packages before the ITCases"));
        }
    }

    /**
     * As a supervisor (Kubernetes, systemd) would: starts again the TaskManagers that exited and
     * waits until the cluster has {@code wanted}. Besides the one the test kills, Flink itself may
     * stop a surviving TaskManager: cleaning up a task whose upstream TaskManager vanished can
     * throw in the task's exception handler ({@code BufferManager.recycle} rethrowing the lost
     * connection), which Flink treats as fatal. Seen once in a fresh-clone run, where the rescaled
     * job then found no slots.
     */
    static void superviseTaskManagers(StandaloneCluster cluster, FlinkRest rest, int wanted)
            throws Exception {
        long running =
                cluster.running().keySet().stream()
                        .filter(n -> n.startsWith("taskmanager"))
                        .count();
        for (long i = running; i < wanted; i++) {
            System.out.println("cluster: a TaskManager exited on its own; starting another");
            cluster.startTaskManager();
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (rest.overview().path("taskmanagers").asInt() < wanted) {
            assertTrue(System.nanoTime() < deadline, "TaskManagers registered: " + rest.overview());
            Thread.sleep(200);
        }
    }

    static void awaitState(FlinkRest rest, String job, String state) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            last = rest.state(job);
            if (last.equals(state)) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError(
                "job " + job + " is " + last + ", not " + state + ": " + rest.exceptions(job));
    }

    /**
     * Waits until the job noticed a failure (its exception history has it) and every vertex runs
     * again; returns when (wall clock, polled every 100 ms).
     */
    static long awaitRestarted(FlinkRest rest, String job) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        boolean failed = false;
        while (System.nanoTime() < deadline) {
            failed =
                    failed
                            || rest.exceptions(job).path("exceptionHistory").path("entries").size()
                                    > 0;
            if (failed) {
                boolean all = true;
                for (JsonNode v : rest.job(job).path("vertices")) {
                    all &= v.path("status").asText().equals("RUNNING");
                }
                if (all) {
                    return System.currentTimeMillis();
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("job " + job + " not running again: " + rest.exceptions(job));
    }

    static int maxParallelismOfVertices(FlinkRest rest, String job) throws Exception {
        int max = 0;
        for (JsonNode v : rest.job(job).path("vertices")) {
            max = Math.max(max, v.path("parallelism").asInt());
        }
        return max;
    }

    /** The cluster's logs, for a look after the test: target/cluster-itcase-logs. */
    static void keepLogs(Path logs) throws Exception {
        Path kept = Path.of("target", "cluster-itcase-logs");
        Files.createDirectories(kept);
        try (Stream<Path> files = Files.list(logs)) {
            for (Path f : files.toList()) {
                Files.copy(
                        f,
                        kept.resolve(f.getFileName()),
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    static long bytes(String savepoint) throws Exception {
        Path dir = Path.of(java.net.URI.create(savepoint));
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
        }
    }

    /** Counts committed outputs as they appear, and when the count first passed a number. */
    static final class OutputWatch implements AutoCloseable {
        private final AtomicInteger count = new AtomicInteger();
        private final List<long[]> growth = new ArrayList<>(); // {count, wall clock millis}
        private final AtomicLong stop = new AtomicLong();
        private final Thread thread;

        OutputWatch(String bootstrap, String name) {
            thread =
                    new Thread(
                            () -> {
                                try (KafkaConsumer<byte[], byte[]> consumer =
                                        new KafkaConsumer<>(
                                                JobOutputs.readCommittedConsumer(bootstrap))) {
                                    consumer.subscribe(
                                            List.of(name + "-deliveries", name + "-audit"));
                                    while (stop.get() == 0) {
                                        int n = consumer.poll(Duration.ofMillis(100)).count();
                                        if (n > 0) {
                                            int total = count.addAndGet(n);
                                            synchronized (growth) {
                                                growth.add(
                                                        new long[] {
                                                            total, System.currentTimeMillis()
                                                        });
                                            }
                                        }
                                    }
                                }
                            },
                            "output-watch");
            thread.setDaemon(true);
            thread.start();
        }

        int count() {
            return count.get();
        }

        /** When outputs were first read after {@code millis} (wall clock). */
        long firstAfter(long millis) {
            synchronized (growth) {
                return growth.stream()
                        .mapToLong(g -> g[1])
                        .filter(t -> t > millis)
                        .min()
                        .orElseThrow();
            }
        }

        void await(int n, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (count.get() < n) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError(
                            count.get() + " outputs, not " + n + ", after " + timeout);
                }
                Thread.sleep(50);
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(1);
            thread.join(10_000);
        }
    }
}
