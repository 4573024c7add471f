package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.testutils.FailOnce;
import io.freqcap.job.testutils.FailingOnceJob;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Delivery;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The held-messages topic on a real broker (contract.md §12), read as a consumer would read it
 * ({@code read_committed}) while a job holds, preempts and releases messages, fails in the middle,
 * stops with a savepoint, resumes at another parallelism, and is replaced by a job without state:
 *
 * <ul>
 *   <li>whenever it is read, a key's tombstone is never visible before the record that ended its
 *       hold, nor a key live whose hold has visibly ended, nor a key of a message never held;
 *   <li>once everything is decided, the live keys are exactly the messages still held;
 *   <li>the resumed job writes nothing new and the live keys stay right; the job without state
 *       tombstones every key before it decides anything.
 * </ul>
 */
class HeldTopicITCase {
    static final int PARTITIONS = 3;
    static final int USERS = 100;

    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 2);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    /** Push: one in 10 minutes, held up to 15 (waits all test long); sms: one in 45 s. */
    static final String CONFIG =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1h\",\"max\":100}],\"channels\":{"
                    + "\"push\":[{\"window\":\"10m\",\"max\":1}],"
                    + "\"sms\":[{\"window\":\"45s\",\"max\":1}]},"
                    + "\"hold\":\"15m\",\"preempt\":true}]}";

    private final Traffic.Sequence sequence = new Traffic.Sequence();

    /** Options of a job named {@code name} with the held topic on, the topic made compacted. */
    Configuration heldTopicOptions(String name, String config, int partitions) throws Exception {
        Configuration options =
                KafkaPipelineSupport.jobOptions(
                        kafka, tmp, name, config, partitions, "--held-topic", name + "-held");
        kafka.createCompactedTopics(partitions, List.of(name + "-held"));
        return options;
    }

    /** Waits until a committed delivery of the job named {@code name} carries {@code id}. */
    static void awaitDelivery(String name, String id, int seconds) {
        JobOutputs.awaitRecordsContaining(
                kafka.bootstrapServers(),
                name + "-deliveries",
                "\"" + id + "\"",
                1,
                Duration.ofSeconds(seconds));
    }

    /** The held topic as read now: every record's key and value (null: tombstone), in order. */
    record Held(List<String[]> records) {
        static Held read(String name) {
            List<String[]> out = new ArrayList<>();
            for (var r : JobOutputs.readAll(kafka.bootstrapServers(), name + "-held")) {
                out.add(
                        new String[] {
                            new String(r.key(), StandardCharsets.UTF_8),
                            r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8)
                        });
            }
            return new Held(out);
        }

        Map<String, String> live() {
            Map<String, String> live = new TreeMap<>();
            for (String[] r : records) {
                if (r[1] == null) {
                    live.remove(r[0]);
                } else {
                    live.put(r[0], r[1]);
                }
            }
            return live;
        }

        Set<String> tombstoned() {
            Set<String> out = new TreeSet<>();
            for (String[] r : records) {
                if (r[1] == null) {
                    out.add(r[0]);
                }
            }
            return out;
        }
    }

    /** The keys ({@code <userId>/<messageId>}) whose hold a committed output record ended. */
    static Set<String> ended(String name) throws Exception {
        Set<String> out = new HashSet<>();
        for (var r : JobOutputs.readAll(kafka.bootstrapServers(), name + "-deliveries")) {
            if (JobOutputs.header(r, Delivery.HEADER_SEND_AT) != null) {
                out.add(key(Json.MAPPER.readTree(r.value())));
            }
        }
        for (var r : JobOutputs.readAll(kafka.bootstrapServers(), name + "-audit")) {
            JsonNode a = Json.MAPPER.readTree(r.value());
            String d = a.get("decision").asText();
            if (d.equals("PREEMPTED") || d.equals("CANCELLED") || d.equals("FORGOTTEN")) {
                out.add(key(a.get("message")));
            }
        }
        return out;
    }

    static String key(JsonNode message) {
        return message.get("userId").asLong() + "/" + message.get("messageId").asText();
    }

    /**
     * Reads the topics as a consumer would, over and over, and checks what must hold whenever they
     * are read: a tombstone only with its ending record (held topic read first), no key live whose
     * ending record is visible (outputs read first), no key of a message never held.
     */
    final class Watcher implements Runnable {
        final String name;
        final Set<String> everHeld;
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicInteger reads = new AtomicInteger();
        volatile boolean stop;

        Watcher(String name, Set<String> everHeld) {
            this.name = name;
            this.everHeld = everHeld;
        }

        @Override
        public void run() {
            try {
                while (!stop) {
                    Held held = Held.read(name);
                    Set<String> endedAfter = ended(name);
                    for (String k : held.tombstoned()) {
                        assertTrue(endedAfter.contains(k), "tombstone before its record: " + k);
                    }
                    Set<String> endedBefore = ended(name);
                    Map<String, String> live = Held.read(name).live();
                    for (String k : live.keySet()) {
                        assertTrue(everHeld.contains(k), "never held: " + k);
                        assertTrue(!endedBefore.contains(k), "live after its record: " + k);
                    }
                    reads.incrementAndGet();
                    Thread.sleep(300);
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        }

        void stopAndCheck() throws Exception {
            stop = true;
            if (failure.get() != null) {
                throw new AssertionError("while the job ran", failure.get());
            }
        }
    }

    /** Waits until {@code check} holds, or fails with its last answer. */
    static void await(
            String what, long millis, java.util.function.Supplier<Object> state, Object want)
            throws InterruptedException {
        long deadline = System.currentTimeMillis() + millis;
        Object got = state.get();
        while (!want.equals(got) && System.currentTimeMillis() < deadline) {
            Thread.sleep(250);
            got = state.get();
        }
        assertEquals(want, got, what);
    }

    @Test
    @Timeout(300)
    void theLiveKeysAreWhatWaitsAcrossAFailureASavepointARescaleAndAStartWithoutState()
            throws Exception {
        String name = "heldtopic";
        Configuration options = heldTopicOptions(name, CONFIG, PARTITIONS);
        CappingSettings settings =
                CappingSettings.of(CONFIG)
                        .withHeldTopic(new KafkaHeldTopic(KafkaSettings.of(options)));
        StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp);
        FailOnce.reset();
        // The failure comes in the middle of the preempting messages.
        FailingOnceJob.failingOnceJob(env, options, 4 * USERS + USERS / 4, settings, null);
        JobClient job = env.executeAsync("freqcap-held-topic");
        List<Input> inputs = new ArrayList<>();
        Set<String> everHeld = new HashSet<>();
        Watcher watcher = new Watcher(name, everHeld);
        Thread watching = new Thread(watcher, "held-topic-watcher");
        String savepoint;
        long t0 = System.currentTimeMillis();
        try {
            List<Input> first = new ArrayList<>();
            for (long user = 0; user < USERS; user++) {
                sequence.add(first, user, "now-" + user, "push", t0, 0); // out at once
                sequence.add(first, user, "promo-" + user, "push", t0 + 1, 10); // held 10 minutes
                sequence.add(first, user, "sms-now-" + user, "sms", t0, 0);
                sequence.add(first, user, "sms-" + user, "sms", t0 + 1, 0); // held 45 s
                everHeld.addAll(List.of(user + "/promo-" + user, user + "/sms-" + user));
            }
            for (long user = 0; user < USERS; user += 2) {
                everHeld.add(user + "/alert-" + user);
            }
            watching.start();
            Traffic.produce(kafka.bootstrapServers(), name + "-in", PARTITIONS, first);
            inputs.addAll(first);
            FailOnce.awaitCheckpoints(2, 20_000); // the held promotions are in a checkpoint
            List<Input> second = new ArrayList<>();
            long t1 = System.currentTimeMillis();
            for (long user = 0; user < USERS; user += 2) {
                // takes the promo's place
                sequence.add(second, user, "alert-" + user, "push", t1, 80);
            }
            Traffic.produce(kafka.bootstrapServers(), name + "-in", PARTITIONS, second);
            inputs.addAll(second);

            // Everything decided: the push messages still wait, and are exactly what is live.
            Map<Integer, Decided> expected = Traffic.finalOutcomes(inputs, CONFIG);
            Set<String> waitingPush = new TreeSet<>();
            for (Input in : inputs) {
                Decided d = expected.get(in.seq);
                if (d.decision() == Decision.ALLOWED
                        && d.verdict().sendAt() != null
                        && d.message().channel().equals("push")) {
                    waitingPush.add(d.message().userId() + "/" + d.message().messageId());
                }
            }
            assertEquals(USERS, waitingPush.size(), "a promo or an alert per user");
            await(
                    "the push messages waiting, once all is decided",
                    60_000,
                    () -> pushKeys(Held.read(name).live().keySet()),
                    waitingPush);
            assertTrue(FailOnce.FAILED.get(), "the failure was injected");
            // The sms messages go out at t0 + 45 s: then none of theirs is live, each tombstoned.
            await(
                    "the sms messages released",
                    t0 + 120_000 - System.currentTimeMillis(),
                    () -> Held.read(name).live().keySet(),
                    waitingPush);
            Held afterRelease = Held.read(name);
            for (long user = 0; user < USERS; user++) {
                assertTrue(afterRelease.tombstoned().contains(user + "/sms-" + user));
            }
            JsonNode notice = Json.MAPPER.readTree(afterRelease.live().get("1/promo-1"));
            assertEquals(10, notice.get("priority").asInt());
            assertEquals(t0 + 600_000, notice.get("sendAt").asLong());
            assertEquals("channel:push", notice.get("heldBy").get(0).get("scope").asText());
            assertEquals(
                    Json.MAPPER.readTree(
                            "{\"scope\":\"channel:push\",\"window\":\"10m\",\"max\":1,\"count\":1}"),
                    notice.get("heldBy").get(0));
            savepoint = KafkaPipelineSupport.stopWithSavepoint(job, tmp);
        } catch (Throwable t) {
            KafkaPipelineSupport.cancel(job);
            throw t;
        } finally {
            watcher.stopAndCheck();
            watching.join();
        }
        assertTrue(watcher.reads.get() > 3, "read while it ran: " + watcher.reads.get());

        // Resumed at parallelism 1: nothing to redo, the live keys unchanged.
        int written = Held.read(name).records().size();
        Map<String, String> live = Held.read(name).live();
        Configuration one = new Configuration(options);
        one.set(FreqcapOptions.PARALLELISM, 1);
        StreamExecutionEnvironment resumedEnv = KafkaPipelineSupport.testEnv(one, tmp, savepoint);
        FailingOnceJob.failingOnceJob(resumedEnv, one, Integer.MAX_VALUE, settings, null);
        JobClient resumed = resumedEnv.executeAsync("freqcap-held-topic-resumed");
        try {
            int before = FailOnce.CHECKPOINTS.get();
            FailOnce.awaitCheckpoints(before + 2, 30_000);
            assertTrue(FailOnce.CHECKPOINTS.get() >= before + 2, "the resumed job checkpoints");
            assertEquals(written, Held.read(name).records().size(), "nothing written again");
            assertEquals(live, Held.read(name).live());
        } finally {
            KafkaPipelineSupport.cancel(resumed);
        }

        // A job without state (its state lost): every key tombstoned before anything is decided.
        StreamExecutionEnvironment freshEnv = KafkaPipelineSupport.testEnv(options, tmp);
        FailingOnceJob.failingOnceJob(freshEnv, options, Integer.MAX_VALUE, settings, null);
        JobClient fresh = freshEnv.executeAsync("freqcap-held-topic-fresh");
        try {
            await("nothing live", 60_000, () -> Held.read(name).live(), Map.of());
            Held after = Held.read(name);
            assertNull(after.records().get(after.records().size() - 1)[1]);
        } finally {
            KafkaPipelineSupport.cancel(fresh);
        }
    }

    /**
     * A transaction another writer left open on the held topic when the job starts (contract.md
     * §12): the start does not wait for it (messages are decided while it is open), and once it
     * commits, the keys it made live that nothing holds are tombstoned: the topic's live keys are
     * what the job holds.
     */
    @Test
    @Timeout(240)
    void aTransactionLeftOpenOnTheTopicIsFollowedUntilItEnds() throws Exception {
        String name = "heldopen";
        Configuration options = heldTopicOptions(name, CONFIG, PARTITIONS);
        Properties foreign = Traffic.producerProps(kafka.bootstrapServers());
        foreign.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "another-writer");
        foreign.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "600000"); // open till it commits
        try (KafkaProducer<byte[], byte[]> writer = new KafkaProducer<>(foreign)) {
            writer.initTransactions();
            writer.beginTransaction();
            for (String key : List.of("42/m-lingering", "7/m-other", "not-a-user-key")) {
                writer.send(
                        new ProducerRecord<>(
                                name + "-held",
                                key.getBytes(StandardCharsets.UTF_8),
                                "{\"messageId\":\"x\"}".getBytes(StandardCharsets.UTF_8)));
            }
            writer.flush(); // on the log, not committed

            JobClient job = start(options, CONFIG, null, "freqcap-held-open");
            try {
                List<Input> inputs = new ArrayList<>();
                long t0 = System.currentTimeMillis();
                sequence.add(inputs, 1, "now-1", "push", t0, 0); // out at once
                sequence.add(inputs, 1, "promo-1", "push", t0 + 1, 10); // held 10 minutes
                Traffic.produce(kafka.bootstrapServers(), name + "-in", PARTITIONS, inputs);
                // Decided while the transaction is open: the start did not wait for it.
                var out =
                        JobOutputs.readCommitted(
                                kafka.bootstrapServers(),
                                List.of(name + "-deliveries"),
                                1,
                                Duration.ofSeconds(60));
                assertEquals(1, out.get(name + "-deliveries").size());
                writer.commitTransaction();
                await(
                        "once the transaction committed, the live keys are what is held",
                        60_000,
                        () -> Held.read(name).live().keySet(),
                        Set.of("1/promo-1"));
            } finally {
                KafkaPipelineSupport.cancel(job);
            }
        }
    }

    /**
     * The job with the held topic on, from {@code savepoint} when not null (its checkpoints counted
     * in {@link FailOnce#CHECKPOINTS}, reset for a start without state).
     */
    JobClient start(Configuration options, String config, String savepoint, String jobName)
            throws Exception {
        CappingSettings settings =
                CappingSettings.of(config)
                        .withHeldTopic(new KafkaHeldTopic(KafkaSettings.of(options)));
        StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp, savepoint);
        if (savepoint == null) {
            FailOnce.reset();
        }
        FailingOnceJob.failingOnceJob(env, options, Integer.MAX_VALUE, settings, null);
        return env.executeAsync(jobName);
    }

    /** Push: one in 45 s, held up to 60 s. */
    static final String SHORT_HOLDS =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1h\","
                    + "\"max\":100}],\"channels\":{\"push\":[{\"window\":\"45s\",\"max\":1}]},"
                    + "\"hold\":\"60s\"}]}";

    /**
     * A rollback to an older savepoint while another writer's transaction is open on the held topic
     * (contract.md §12): the later run's notice of b-2 lies behind that transaction, and the
     * rolled-back run, replaying b-2 after its send time, releases it at once and writes nothing
     * for it. Once the transaction commits, the rolled-back run's follow finds b-2's key (and the
     * other writer's) and tombstones them: nothing stays live that nothing holds.
     */
    @Test
    @Timeout(240)
    void aRollbackToAnOlderSavepointLeavesNothingLiveThatNothingHolds() throws Exception {
        String name = "heldrollback";
        Configuration options = heldTopicOptions(name, SHORT_HOLDS, 1);
        JobClient later = start(options, SHORT_HOLDS, null, "freqcap-held-rollback-a");
        String savepoint;
        long t1;
        Properties foreign = Traffic.producerProps(kafka.bootstrapServers());
        foreign.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "another-writer-rollback");
        foreign.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "600000"); // open till it commits
        KafkaProducer<byte[], byte[]> writer = new KafkaProducer<>(foreign);
        try {
            List<Input> first = new ArrayList<>();
            long t0 = System.currentTimeMillis();
            sequence.add(first, 1, "a-1", "push", t0, 0); // out at once
            sequence.add(first, 1, "b-1", "push", t0 + 1, 0); // held 45 s
            Traffic.produce(kafka.bootstrapServers(), name + "-in", 1, first);
            awaitDelivery(name, "a-1", 60);
            savepoint =
                    later.triggerSavepoint(
                                    tmp.resolve("older").toUri().toString(),
                                    org.apache.flink.core.execution.SavepointFormatType.CANONICAL)
                            .get();
            writer.initTransactions();
            writer.beginTransaction();
            writer.send(
                    new ProducerRecord<>(
                            name + "-held",
                            "7/x".getBytes(StandardCharsets.UTF_8),
                            "{\"messageId\":\"x\"}".getBytes(StandardCharsets.UTF_8)));
            writer.flush();
            List<Input> second = new ArrayList<>();
            t1 = System.currentTimeMillis();
            sequence.add(second, 2, "a-2", "push", t1, 0);
            // held 45 s, noticed behind the open transaction
            sequence.add(second, 2, "b-2", "push", t1 + 1, 0);
            Traffic.produce(kafka.bootstrapServers(), name + "-in", 1, second);
            awaitDelivery(name, "a-2", 60);
            int checkpoints = FailOnce.CHECKPOINTS.get();
            FailOnce.awaitCheckpoints(checkpoints + 2, 30_000); // b-2's notice committed
            assertTrue(FailOnce.CHECKPOINTS.get() >= checkpoints + 2, "the later run checkpoints");
            assertTrue(
                    System.currentTimeMillis() < t1 + 45_000,
                    "the later run still holds b-2 when it goes (the machine was too slow)");
        } finally {
            KafkaPipelineSupport.cancel(later);
        }
        // Past b-2's send time: the rolled-back run replays it and releases it at once.
        Thread.sleep(Math.max(0, t1 + 47_000 - System.currentTimeMillis()));
        JobClient rolledBack = start(options, SHORT_HOLDS, savepoint, "freqcap-held-rollback-b");
        try {
            awaitDelivery(name, "b-2", 90);
            writer.commitTransaction();
            await(
                    "nothing live once the other writer committed",
                    60_000,
                    () -> Held.read(name).live().keySet(),
                    Set.of());
        } finally {
            writer.close();
            KafkaPipelineSupport.cancel(rolledBack);
        }
    }

    @Test
    void freqcapQueryOnATopicThatDoesNotExistSaysSoInOneLine() throws Exception {
        var err = new java.io.ByteArrayOutputStream();
        int code =
                io.freqcap.job.tools.query.HeldQuery.run(
                        new String[] {
                            "--held",
                            "--bootstrap-servers",
                            kafka.bootstrapServers(),
                            "--held-topic",
                            "no-such-held-topic"
                        },
                        new java.io.PrintStream(new java.io.ByteArrayOutputStream()),
                        new java.io.PrintStream(err, true));
        String said = err.toString(StandardCharsets.UTF_8);
        assertEquals(1, code, said);
        assertEquals(
                "freqcap-query: the held topic no-such-held-topic does not exist at "
                        + kafka.bootstrapServers(),
                said.strip());
    }

    static Set<String> pushKeys(Set<String> keys) {
        Set<String> out = new TreeSet<>();
        for (String k : keys) {
            if (!k.contains("/sms-")) {
                out.add(k);
            }
        }
        return out;
    }
}
