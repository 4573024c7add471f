package io.freqcap.job;

import static io.freqcap.job.testutils.Traffic.config;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.freqcap.job.local.EmbeddedRedis;
import io.freqcap.job.testutils.EmbeddedRedisCluster;
import io.freqcap.job.testutils.FailOnce;
import io.freqcap.job.testutils.FailingOnceJob;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.JobOutputs.Output;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import io.freqcap.job.tools.query.RedisSync;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.mirror.MirrorSettings;
import io.freqcap.operators.mirror.RedisMirrorSink;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.mirror.MirrorLog;
import io.freqcap.schema.mirror.MirrorWrite;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.LongPredicate;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Redis mirror through the whole job: a real Kafka broker, real redis-server processes (a
 * single one and a 3-master cluster), the job at parallelism 2. After every scenario Redis must
 * hold exactly the counted messages: for each user, the ALLOWED messages no older than the user's
 * latest one minus the longest window, in the user's key and in its channel keys.
 */
class RedisMirrorITCase {
    static final int PARTITIONS = 4;
    static final String CONFIG = config(1, 3, 10, 1);
    static final long WEEK = 7 * io.freqcap.schema.Instants.DAY;

    static final InMemoryReporter METRICS = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            KafkaPipelineSupport.miniCluster(METRICS.addToConfiguration(new Configuration()), 1, 4);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    /** The options of a job named {@code name} mirroring into {@code redisUri} under its name. */
    Configuration options(String name, String redisUri, String config, String... extra)
            throws Exception {
        return KafkaPipelineSupport.mirroringJobOptions(
                kafka, tmp, name, config, PARTITIONS, redisUri, extra);
    }

    /** What a test does with its Redis while its job runs. */
    interface Scenario {
        void run(EmbeddedRedis redis, JobClient job) throws Exception;
    }

    /**
     * Runs {@code scenario} with a Redis of its own (persistent, {@code aof}, or not) and the job
     * named {@code name} mirroring into it under {@code config}; cancels the job after it.
     */
    void withMirroringJob(
            String name, boolean aof, String config, Scenario scenario, String... extra)
            throws Exception {
        try (EmbeddedRedis redis = EmbeddedRedis.start(tmp.resolve("redis"), aof)) {
            Configuration options = options(name, redis.uri(), config, extra);
            JobClient job = KafkaPipelineSupport.startJob(options, tmp, config, "freqcap-redis-it");
            try {
                scenario.run(redis, job);
            } finally {
                KafkaPipelineSupport.cancel(job);
            }
        }
    }

    void produce(String name, List<Input> inputs) throws Exception {
        Traffic.produce(kafka.bootstrapServers(), name + "-in", PARTITIONS, inputs);
    }

    /** Reads every output of {@code inputs} (read_committed) and checks the decisions. */
    Map<Integer, Output> decided(String name, List<Input> inputs) throws Exception {
        return decided(name, inputs, CONFIG);
    }

    Map<Integer, Output> decided(String name, List<Input> inputs, String config) throws Exception {
        return JobOutputs.readAndCheck(
                kafka.bootstrapServers(), name, inputs, config, Duration.ofSeconds(120));
    }

    /** key -> (member -> score): what Redis must hold after the job counted {@code outputs}. */
    static Map<String, List<String>> expectedMirror(
            List<Input> inputs, Map<Integer, Output> outputs, String prefix) throws Exception {
        return expectedMirror(inputs, outputs, prefix, WEEK);
    }

    /**
     * The same for a longest window of {@code window}, contract.md §7 read literally: every ALLOWED
     * message, scored at its send time (a held one's) or its timestamp, unless it is scored before
     * the user's latest stamped timestamp minus the window.
     */
    static Map<String, List<String>> expectedMirror(
            List<Input> inputs, Map<Integer, Output> outputs, String prefix, long window)
            throws Exception {
        // Per user, its counted messages in decision order, each with its score.
        Map<Long, List<Map.Entry<OutboundMessage, Long>>> counted = new HashMap<>();
        for (Input in : inputs) {
            Output o = outputs.get(in.seq);
            if (o != null && o.decision().equals("ALLOWED")) {
                OutboundMessage m = OutboundMessage.parse(in.value);
                long score = o.sendAt() != null ? o.sendAt() : m.timestamp();
                counted.computeIfAbsent(m.userId(), u -> new ArrayList<>())
                        .add(Map.entry(m, score));
            }
        }
        Map<String, List<String>> expected = new TreeMap<>();
        counted.forEach(
                (user, messages) -> {
                    long latestStamped =
                            messages.stream()
                                    .mapToLong(e -> e.getKey().timestamp())
                                    .max()
                                    .getAsLong();
                    List<MirrorLog.Entry> log = new ArrayList<>();
                    for (Map.Entry<OutboundMessage, Long> e : messages) {
                        if (e.getValue() >= latestStamped - window) {
                            OutboundMessage m = e.getKey();
                            log.add(new MirrorLog.Entry(e.getValue(), m.channel(), m.messageId()));
                        }
                    }
                    log.sort(MirrorLog.ORDER);
                    // A key expires a window after its highest score (§7): one that has, or soon
                    // will while the test compares, is not expected (nor read, mirrorContent).
                    if (!log.isEmpty() && log.get(log.size() - 1).score() + window > soon()) {
                        expected.put(MirrorWrite.userKey(prefix, user), text(log));
                    }
                });
        return expected;
    }

    /** Ten minutes from now: keys expiring before are left out of comparisons. */
    static long soon() {
        return System.currentTimeMillis() + 600_000L;
    }

    /** A log's entries as lines ("score channel messageId"), in the log's order. */
    static List<String> text(List<MirrorLog.Entry> log) {
        List<String> out = new ArrayList<>();
        for (MirrorLog.Entry e : log) {
            out.add(e.score() + " " + e.channel() + " " + e.messageId());
        }
        return out;
    }

    /** Everything under {@code prefix} in Redis (every node of a cluster). */
    static Map<String, List<String>> mirrorContent(String uri, String prefix) {
        return mirrorContent(uri, null, prefix);
    }

    static Map<String, List<String>> mirrorContent(String uri, String passwordFile, String prefix) {
        Map<String, List<String>> content = new TreeMap<>();
        withRedis(
                uri,
                passwordFile,
                redis -> {
                    for (String key : redis.keys(prefix + ":*")) {
                        String value = redis.get(key);
                        if (value == null) {
                            continue; // expired or deleted meanwhile
                        }
                        List<String> log =
                                text(MirrorLog.decode(value.getBytes(StandardCharsets.UTF_8)));
                        long ttl = redis.pttl(key);
                        if (ttl < 0) {
                            log.add("(no expiry)"); // a key must never be left without one
                        } else if (System.currentTimeMillis() + ttl <= soon()) {
                            continue; // expiring while the test compares: not expected either
                        }
                        content.put(key, log);
                    }
                });
        return content;
    }

    static void withRedis(
            String uri, java.util.function.Consumer<RedisClusterCommands<String, String>> use) {
        withRedis(uri, null, use);
    }

    static void withRedis(
            String uri,
            String passwordFile,
            java.util.function.Consumer<RedisClusterCommands<String, String>> use) {
        try (RedisSync redis = RedisSync.open(uri, passwordFile)) {
            use.accept(redis.commands());
        }
    }

    /** Waits until Redis holds exactly {@code expected}; fails with the difference. */
    static void awaitMirror(String uri, String prefix, Map<String, List<String>> expected)
            throws InterruptedException {
        awaitMirror(uri, null, prefix, expected);
    }

    static void awaitMirror(
            String uri, String passwordFile, String prefix, Map<String, List<String>> expected)
            throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        Map<String, List<String>> actual = Map.of();
        while (System.nanoTime() < deadline) {
            try {
                actual = mirrorContent(uri, passwordFile, prefix);
                if (actual.equals(expected)) {
                    return;
                }
            } catch (RuntimeException redisNotBackYet) {
                // retry
            }
            Thread.sleep(500);
        }
        List<String> diff = new ArrayList<>();
        for (String k : expected.keySet()) {
            if (!expected.get(k).equals(actual.get(k))) {
                diff.add(k + ": " + difference(expected.get(k), actual.get(k)));
            }
        }
        for (String k : actual.keySet()) {
            if (!expected.containsKey(k)) {
                diff.add(k + ": not expected, holds " + actual.get(k).size() + " entries");
            }
        }
        fail(
                diff.size()
                        + " keys differ (of "
                        + expected.size()
                        + " expected), e.g. "
                        + diff.subList(0, Math.min(5, diff.size())));
    }

    /** How a key's logs differ, in a line however long they are. */
    static String difference(List<String> expected, List<String> actual) {
        if (actual == null) {
            return "missing, expected " + expected.size() + " entries";
        }
        List<String> missing = new ArrayList<>(expected);
        missing.removeAll(actual);
        List<String> extra = new ArrayList<>(actual);
        extra.removeAll(expected);
        return String.format(
                "%d entries, expected %d; missing %d %s; extra %d %s%s",
                actual.size(),
                expected.size(),
                missing.size(),
                missing.subList(0, Math.min(5, missing.size())),
                extra.size(),
                extra.subList(0, Math.min(5, extra.size())),
                missing.isEmpty() && extra.isEmpty() ? "; out of order" : "");
    }

    /** The sum over parallel instances of a mirror metric (counter or gauge). */
    static long metric(JobID job, String name) {
        long sum = 0;
        for (Map.Entry<String, Metric> e : METRICS.findMetrics(job, name).entrySet()) {
            if (e.getKey().contains(".segment.")) {
                continue; // the per-segment counters share the decision counters' names
            }
            Metric m = e.getValue();
            if (m instanceof Counter c) {
                sum += c.getCount();
            } else if (m instanceof Gauge<?> g && g.getValue() instanceof Number n) {
                sum += n.longValue();
            }
        }
        return sum;
    }

    static void awaitMetric(JobID job, String name, LongPredicate ok, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (!ok.test(metric(job, name))) {
            if (System.nanoTime() > deadline) {
                fail(what + ": " + name + " is " + metric(job, name));
            }
            Thread.sleep(100);
        }
    }

    /** A day's limits that hold push through Berlin's nights (and capped messages up to 12 h). */
    static final String HOLD_CONFIG =
            "{\"version\":1,\"timezone\":\"Europe/Berlin\",\"rules\":[{\"segment\":\"*\","
                    + "\"limits\":[{\"window\":\"1d\",\"max\":3}],"
                    + "\"channels\":{\"email\":[{\"window\":\"1d\",\"max\":1}]},"
                    + "\"hold\":\"12h\",\"quietHours\":{\"from\":\"21:00\",\"to\":\"08:00\","
                    + "\"channels\":[\"push\"]}}],\"exempt\":[\"transactional\"]}";

    /**
     * Contract v4 §7 with held messages: each is in Redis at its send time, and the keys are
     * trimmed by stamped timestamps, never by a send time ahead, so a reader counting a user's last
     * window sees every message counted there (trimmed from the highest score, a run like this
     * missed hundreds of counted members).
     */
    @Test
    @Timeout(300)
    void heldMessagesAreMirroredAtTheirSendTimesAndNothingCountedIsTrimmed() throws Exception {
        String name = "held";
        List<Input> inputs = Traffic.traffic(23, 20_000, 1_000, 12, Traffic.recent(12));
        withMirroringJob(
                name,
                false,
                HOLD_CONFIG,
                (redis, job) -> {
                    produce(name, inputs);
                    Map<Integer, Output> outputs = decided(name, inputs, HOLD_CONFIG);
                    long held = outputs.values().stream().filter(o -> o.sendAt() != null).count();
                    assertTrue(held > 1_000, held + " held messages");
                    awaitMirror(
                            redis.uri(),
                            name,
                            expectedMirror(inputs, outputs, name, io.freqcap.schema.Instants.DAY));
                });
    }

    @Test
    @Timeout(300)
    void mirrorHoldsExactlyTheCountedMessages() throws Exception {
        String name = "mirror";
        // 12 days of traffic under a 7-day window: members are trimmed as users move on.
        List<Input> inputs = Traffic.traffic(11, 30_000, 1_000, 12, Traffic.recent(12));
        withMirroringJob(
                name,
                false,
                CONFIG,
                (redis, job) -> {
                    produce(name, inputs);
                    Map<Integer, Output> outputs = decided(name, inputs);
                    Map<String, List<String>> expected = expectedMirror(inputs, outputs, name);
                    assertTrue(expected.size() > 900, "keys expected: " + expected.size());
                    awaitMirror(redis.uri(), name, expected);
                    assertEquals(0, metric(job.getJobID(), "redisErrors"));
                    assertEquals(0, metric(job.getJobID(), "redisBacklog"));
                    // The capping operator's counters (contract.md §9) count each kind of
                    // decision.
                    Map<String, Long> byDecision = new java.util.TreeMap<>();
                    outputs.values().forEach(o -> byDecision.merge(o.decision(), 1L, Long::sum));
                    assertTrue(byDecision.keySet().size() >= 6, "every kind occurs: " + byDecision);
                    for (String decision : byDecision.keySet()) {
                        String counter = decision.toLowerCase(java.util.Locale.ROOT);
                        long expectedCount = byDecision.get(decision);
                        awaitMetric(
                                job.getJobID(),
                                counter,
                                n -> n == expectedCount,
                                "counter " + counter + " (" + expectedCount + " outputs)");
                    }
                    // One write per user decided since its last write: every decision marks
                    // its user (REJECTED and DUPLICATE ones here too; in general a replayed
                    // message may not count where its first decision did), so at most one per
                    // decided message, and at least one per user with a key. Nothing was
                    // dropped, so no rebuild wrote beside them. How far below the upper bound a
                    // run lands depends on how many decisions of a user fall between two
                    // flushes, that is on the machine's speed: the bound catches more than one
                    // write per decision (CappingMirrorTest checks the coalescing exactly).
                    assertEquals(0, metric(job.getJobID(), "redisDropped"));
                    long keysWritten = metric(job.getJobID(), "redisWrites");
                    assertTrue(
                            keysWritten >= expected.size() && keysWritten <= outputs.size(),
                            keysWritten
                                    + " keys written for "
                                    + expected.size()
                                    + " users with a key and "
                                    + outputs.size()
                                    + " decided messages");
                });
    }

    @Test
    @Timeout(300)
    void aClusterHoldsEachUsersKeysOnTheNodeOfTheirSlot() throws Exception {
        String name = "cluster";
        try (EmbeddedRedisCluster cluster = EmbeddedRedisCluster.start(tmp.resolve("redis"), 3)) {
            Configuration options = options(name, cluster.uri(), CONFIG);
            List<Input> inputs = Traffic.traffic(12, 20_000, 1_000, 12, Traffic.recent(12));
            JobClient job = KafkaPipelineSupport.startJob(options, tmp, CONFIG, "freqcap-redis-it");
            try {
                produce(name, inputs);
                Map<Integer, Output> outputs = decided(name, inputs);
                awaitMirror(cluster.uri(), name, expectedMirror(inputs, outputs, name));
                // Exact (above) with nothing left to retry: a CROSSSLOT, which every call of a
                // user with more than one key would meet, would have left Redis without them.
                // (redisErrors may count a timed-out call on a loaded machine, retried since.)
                assertEquals(0, metric(job.getJobID(), "redisBacklog"));
                List<EmbeddedRedis> nodes = cluster.nodes();
                for (int i = 0; i < nodes.size(); i++) {
                    int from = 16384 * i / nodes.size();
                    int to = 16384 * (i + 1) / nodes.size() - 1;
                    List<String> keys = new ArrayList<>();
                    withRedis(nodes.get(i).uri(), r -> keys.addAll(r.keys(name + ":*")));
                    assertTrue(keys.size() > 100, "node " + i + " holds " + keys.size() + " keys");
                    for (String key : keys) {
                        int slot = SlotHash.getSlot(key);
                        assertTrue(slot >= from && slot <= to, key + " in slot " + slot);
                    }
                }
            } finally {
                KafkaPipelineSupport.cancel(job);
            }
        }
    }

    @Test
    @Timeout(300)
    void keepsDecidingWhileRedisIsDownAndCatchesUpWhenItReturns() throws Exception {
        String name = "outage";
        List<Input> inputs = Traffic.traffic(13, 20_000, 1_000, 12, Traffic.recent(12));
        withMirroringJob(
                name,
                true,
                CONFIG,
                (redis, job) -> {
                    JobID id = job.getJobID();
                    produce(name, inputs.subList(0, 10_000));
                    decided(name, inputs.subList(0, 10_000));
                    awaitMetric(
                            id, "redisBacklog", b -> b == 0, "mirror caught up before the kill");

                    redis.kill();
                    produce(name, inputs.subList(10_000, inputs.size()));
                    // Every input decided and committed while Redis is down: checkpoints succeed.
                    Map<Integer, Output> outputs = decided(name, inputs);
                    assertTrue(metric(id, "redisBacklog") > 0, "counted messages wait for Redis");
                    assertTrue(metric(id, "redisErrors") > 0, "failed writes are counted");

                    redis.start(); // same port, its AOF: everything it acknowledged
                    awaitMetric(
                            id, "redisBacklog", b -> b == 0, "backlog drained after the restart");
                    awaitMirror(redis.uri(), name, expectedMirror(inputs, outputs, name));
                    assertEquals(JobStatus.RUNNING, job.getJobStatus().get());
                });
    }

    /**
     * A stalled Redis: deliveries never wait, the mirror drops its backlog and rebuilds every
     * user's keys once Redis answers. A {@code forget-user} applied while the mirror is dropping
     * still deletes the user's keys (contract v4 §7: the erasure is remembered until Redis confirms
     * it; the rebuild alone writes only users still in state, and left them).
     */
    @Test
    @Timeout(300)
    void aStalledRedisStopsNoDeliveryAndIsRebuiltWhenItAnswersAgain() throws Exception {
        String name = "stall";
        List<Input> inputs = Traffic.traffic(17, 20_000, 1_000, 6, Traffic.recent(6));
        List<Input> first = inputs.subList(0, 10_000);
        Scenario stall =
                (redis, job) -> {
                    JobID id = job.getJobID();
                    produce(name, first);
                    Map<Integer, Output> firstOutputs = decided(name, first);
                    awaitMetric(
                            id, "redisBacklog", b -> b == 0, "mirror caught up before the stall");
                    // A user with keys in Redis now, who sends nothing more: forgotten below.
                    Map<String, List<String>> before = expectedMirror(first, firstOutputs, name);
                    long forgotten = userOfKey(before.keySet().iterator().next());
                    List<Input> all = new ArrayList<>(first);
                    for (Input in : inputs.subList(10_000, inputs.size())) {
                        Long u = Traffic.userOf(in);
                        if (u == null || u != forgotten) {
                            all.add(in);
                        }
                    }

                    redis.pause(); // SIGSTOP: connections open, no answers
                    try {
                        produce(name, all.subList(10_000, all.size()));
                        // Every input decided and committed (so checkpoints complete) during the
                        // stall, although the mirror's backlog bound is far below what was
                        // counted.
                        decided(name, all);
                        assertTrue(metric(id, "redisDropped") > 0, "the backlog was dropped");
                        assertEquals(1, metric(id, "redisDropping") > 0 ? 1 : 0, "and says so");
                        command(
                                name,
                                "{\"command\": \"forget-user\", \"userId\": " + forgotten + "}");
                        awaitConfigRead(name);
                    } finally {
                        redis.resume();
                    }
                    // No command: the capping tasks rebuild every user's keys once Redis answers,
                    // and delete the forgotten user's first.
                    Map<Integer, Output> outputs = decided(name, all);
                    Map<String, List<String>> expected = expectedMirror(all, outputs, name);
                    assertTrue(
                            expected.keySet().removeIf(k -> userOfKey(k) == forgotten),
                            "the forgotten user had keys");
                    awaitMirror(redis.uri(), name, expected);
                    awaitMetric(id, "redisDropping", d -> d == 0, "writing again");
                    assertEquals(JobStatus.RUNNING, job.getJobStatus().get());
                };
        withMirroringJob(name, false, CONFIG, stall, "--redis-max-backlog", "2000");
    }

    /** Sends {@code json} to the config topic of the job named {@code name}. */
    void command(String name, String json) throws Exception {
        Traffic.send(kafka.bootstrapServers(), name + "-config", json);
    }

    /** The userId of a mirror key ({@code <prefix>:{<userId>}...}). */
    static long userOfKey(String key) {
        return Long.parseLong(key.substring(key.indexOf('{') + 1, key.indexOf('}')));
    }

    /**
     * Waits until the job's config source committed the end of the config topic: a checkpoint
     * completed after the capping tasks took every config record.
     */
    void awaitConfigRead(String name) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (Admin admin = Admin.create(p)) {
            TopicPartition tp = new TopicPartition(name + "-config", 0);
            long end =
                    admin.listOffsets(Map.of(tp, OffsetSpec.latest()))
                            .partitionResult(tp)
                            .get()
                            .offset();
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (System.nanoTime() < deadline) {
                var committed =
                        admin.listConsumerGroupOffsets(name + "-config")
                                .partitionsToOffsetAndMetadata()
                                .get()
                                .get(tp);
                if (committed != null && committed.offset() >= end) {
                    return;
                }
                Thread.sleep(200);
            }
            throw new AssertionError("the config topic was not read to its end " + end);
        }
    }

    @Test
    @Timeout(300)
    void rebuildMirrorRestoresARedisThatLostEverything() throws Exception {
        String name = "rebuild";
        List<Input> inputs = Traffic.traffic(14, 20_000, 1_000, 12, Traffic.recent(12));
        List<Input> firstPart = inputs.subList(0, 15_000);
        withMirroringJob(
                name,
                false,
                CONFIG,
                (redis, job) -> {
                    produce(name, firstPart);
                    Map<Integer, Output> firstOutputs = decided(name, firstPart);
                    awaitMirror(redis.uri(), name, expectedMirror(firstPart, firstOutputs, name));

                    redis.kill();
                    redis.start(); // no persistence: empty
                    produce(name, inputs.subList(15_000, inputs.size()));
                    Map<Integer, Output> outputs = decided(name, inputs);
                    command(name, "{\"command\": \"rebuild-mirror\"}");
                    awaitMirror(redis.uri(), name, expectedMirror(inputs, outputs, name));
                });
    }

    /** One rule, one limit of 90 days: nothing is rejected, every counted message is kept. */
    static final String HEAVY_CONFIG =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"90d\",\"max\":1000000}]}]}";

    @Test
    @Timeout(300)
    void aHeavyUsersHundredThousandMessagesAreMirroredAndRebuiltExactly() throws Exception {
        String name = "heavy";
        int n = 100_000;
        List<Input> inputs = new ArrayList<>();
        Map<String, List<String>> expected = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            String channel = i % 3 == 0 ? "email" : "push";
            long t = Traffic.recent(2) + i * 1000L;
            String json =
                    String.format(
                            "{\"messageId\":\"h-%d\",\"userId\":42,\"channel\":\"%s\","
                                    + "\"timestamp\":%d}",
                            i, channel, t);
            inputs.add(
                    new Input(
                            i,
                            "42".getBytes(StandardCharsets.UTF_8),
                            json.getBytes(StandardCharsets.UTF_8)));
            expected.computeIfAbsent(MirrorWrite.userKey(name, 42), k -> new ArrayList<>())
                    .add(t + " " + channel + " h-" + i);
        }
        withMirroringJob(
                name,
                false,
                HEAVY_CONFIG,
                (redis, job) -> {
                    produce(name, inputs);
                    var out =
                            JobOutputs.readOutputs(
                                    kafka.bootstrapServers(), name, n, Duration.ofSeconds(180));
                    assertEquals(n, out.get(name + "-deliveries").size(), "every message ALLOWED");
                    awaitMirror(redis.uri(), name, expected);
                    assertTrue(
                            metric(job.getJobID(), "longHistoryEntries") >= n,
                            "the history is held long");

                    redis.kill();
                    redis.start(); // no persistence: empty
                    command(name, "{\"command\": \"rebuild-mirror\"}");
                    awaitMirror(redis.uri(), name, expected);
                });
    }

    @Test
    @Timeout(300)
    void mirrorStaysExactAcrossAJobFailure() throws Exception {
        String name = "mirror-failover";
        try (EmbeddedRedis redis = EmbeddedRedis.start(tmp.resolve("redis"), false)) {
            Configuration options = options(name, redis.uri(), CONFIG);
            List<Input> inputs = Traffic.traffic(15, 30_000, 1_000, 12, Traffic.recent(12));
            FailOnce.reset();
            StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp);
            FailingOnceJob.failingOnceJob(
                    env,
                    options,
                    12000,
                    // a small history cache: users evict each other across the failure
                    CappingSettings.of(CONFIG).withHistoryCache(64),
                    new RedisMirrorSink(MirrorSettings.of(redis.uri(), name, 1_000_000, null)));
            JobClient job = env.executeAsync("freqcap-mirror-failover");
            try {
                for (int i = 0; i < inputs.size(); i += 5_000) {
                    produce(name, inputs.subList(i, i + 5_000));
                    Thread.sleep(700);
                }
                Map<Integer, Output> outputs = decided(name, inputs);
                assertTrue(FailOnce.FAILED.get(), "the failure was injected");
                awaitMirror(redis.uri(), name, expectedMirror(inputs, outputs, name));
            } finally {
                KafkaPipelineSupport.cancel(job);
            }
        }
    }
}
