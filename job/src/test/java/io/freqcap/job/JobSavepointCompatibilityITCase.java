package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.local.EmbeddedRedis;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.LimitConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Upgrades: a savepoint of the whole job of release 0.2 (every operator: the Kafka sources, parse,
 * capping, the Kafka sinks and the Redis mirror sink), committed under {@code
 * src/test/resources/savepoints/freqcap-0.2}, restores into this version, which then decides every
 * new message as a job that never stopped would. The savepoint holds 100 users' first day (four
 * messages each, the fourth over a cap of three a day); after the restore, more messages of that
 * day are rejected (the histories came back) and the next day's are allowed.
 *
 * <p>To make the next release's savepoint: {@code mvn -pl job verify -Dit.test=
 * JobSavepointCompatibilityITCase -Dfreqcap.writeSavepoint=0.3} writes {@code
 * src/test/resources/savepoints/freqcap-0.3}; commit it and add a test restoring it beside this one
 * (keep the old ones).
 */
class JobSavepointCompatibilityITCase {
    static final String NAME = "upgrade";
    static final String HELD = "upgrade-held";
    static final int USERS = 100;
    static final String CONFIG = Traffic.config(1, 3, 10, 1);
    static final Path SAVEPOINTS = Path.of("src", "test", "resources", "savepoints");

    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 4);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    /**
     * Messages {@code from..to-1} of each user, an hour apart from the start of day {@code day}.
     */
    static List<Input> messages(int day, int from, int to, int firstSeq) {
        List<Input> out = new ArrayList<>();
        int seq = firstSeq;
        for (int k = from; k < to; k++) {
            for (int u = 0; u < USERS; u++) {
                long t = Traffic.START + day * io.freqcap.schema.Instants.DAY + k * 3_600_000L;
                out.add(Traffic.pushMessage(seq++, u, "m-" + u + "-" + day + "-" + k, t));
            }
        }
        return out;
    }

    /** What the savepoint's job read: four messages a user on day 0. */
    static List<Input> beforeTheSavepoint() {
        return messages(0, 0, 4, 0);
    }

    /** Two more on day 0 (over the cap), two on day 1 (allowed). */
    static List<Input> afterTheSavepoint() {
        List<Input> out = new ArrayList<>(messages(0, 4, 6, 10_000));
        out.addAll(messages(1, 0, 2, 20_000));
        return out;
    }

    /**
     * Starts the job, from {@code savepoint} when not null, once {@code inputs} are on its input
     * topic.
     *
     * @param name the topics' and the consumer group's: one per test, the broker is shared
     */
    JobClient start(
            EmbeddedRedis redis, String savepoint, String config, String name, List<Input> inputs)
            throws Exception {
        Configuration options =
                KafkaPipelineSupport.mirroringJobOptions(kafka, tmp, name, config, 4, redis.uri());
        StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp, savepoint);
        FreqcapMain.wireKafka(env, JobSettings.from(options, LimitConfig.parse(config), null));
        Traffic.produce(kafka.bootstrapServers(), name + "-in", 4, inputs);
        return env.executeAsync("freqcap-" + name);
    }

    /** The outputs of the job named {@code name}, read until {@code n} arrived. */
    Map<String, List<ConsumerRecord<byte[], byte[]>>> outputs(String name, int n) {
        return JobOutputs.readOutputs(kafka.bootstrapServers(), name, n, Duration.ofSeconds(120));
    }

    /** {@code before}, then {@code after}: what a restored job's input topic holds. */
    static List<Input> concat(List<Input> before, List<Input> after) {
        List<Input> all = new ArrayList<>(before);
        all.addAll(after);
        return all;
    }

    @Test
    @Timeout(240)
    void theSavepointOfRelease02RestoresAndDecidesAsIfNeverStopped() throws Exception {
        Path savepoint = SAVEPOINTS.resolve("freqcap-0.2").toAbsolutePath();
        assertTrue(
                Files.exists(savepoint.resolve("_metadata")), "committed savepoint " + savepoint);
        // The same input again on a fresh broker, so that the restored source offsets point just
        // past it, then what comes after.
        List<Input> before = beforeTheSavepoint();
        List<Input> after = afterTheSavepoint();
        List<Input> all = concat(before, after);
        try (EmbeddedRedis redis = EmbeddedRedis.start(tmp.resolve("redis"), false)) {
            JobClient job = start(redis, savepoint.toUri().toString(), CONFIG, NAME, all);
            try {
                Map<Integer, String> decided = decisions(outputs(NAME, after.size()));
                assertEquals(
                        after.size(), decided.size(), "one output per new input, none for old");
                Map<Integer, String> expected = decisionCore(all);
                int rejected = 0;
                for (Input in : after) {
                    assertEquals(expected.get(in.seq), decided.get(in.seq), "input " + in.seq);
                    rejected += decided.get(in.seq).equals("REJECTED") ? 1 : 0;
                }
                assertEquals(
                        2 * USERS, rejected, "day 0's fifth and sixth: the histories came back");
                // The savepoint's sinks used 0.2's transactional ids (<group>-deliveries-...);
                // the restored job uses <group>-deliveries@<topic>-... and must leave none of the
                // old ones open, or read_committed readers of those partitions would stall.
                try (var admin = kafka.admin()) {
                    var lingering =
                            admin.listTransactions().all().get().stream()
                                    .filter(t -> !t.transactionalId().contains("@"))
                                    .filter(
                                            t ->
                                                    t.state()
                                                            == org.apache.kafka.clients.admin
                                                                    .TransactionState.ONGOING)
                                    .toList();
                    assertTrue(lingering.isEmpty(), "open transactions of 0.2: " + lingering);
                    assertTrue(
                            admin.listTransactions().all().get().stream()
                                    .anyMatch(t -> t.transactionalId().contains("@")),
                            "the restored job writes under its own ids");
                }
            } finally {
                KafkaPipelineSupport.cancel(job);
            }
        }
    }

    /** Writes the savepoint of this release: {@code -Dfreqcap.writeSavepoint=<version>}. */
    @Test
    @Timeout(240)
    @EnabledIfSystemProperty(named = "freqcap.writeSavepoint", matches = "\\d+\\.\\d+")
    void writeTheSavepointOfThisRelease() throws Exception {
        Path target = SAVEPOINTS.resolve("freqcap-" + System.getProperty("freqcap.writeSavepoint"));
        List<Input> before = beforeTheSavepoint();
        try (EmbeddedRedis redis = EmbeddedRedis.start(tmp.resolve("redis"), false)) {
            JobClient job = start(redis, null, CONFIG, NAME, before);
            assertEquals(before.size(), decisions(outputs(NAME, before.size())).size());
            String path = KafkaPipelineSupport.settledSavepoint(job, tmp);
            KafkaPipelineSupport.copySavepoint(path, target);
            System.out.println("savepoint written to " + target.toAbsolutePath());
        }
    }

    /**
     * The savepoint of release 0.3 holds messages waiting for their send time: 100 users' four
     * messages sent inside quiet hours that ended a few minutes after the savepoint was taken, the
     * first three held to that end, the fourth over a cap of three a day. {@code held.json} beside
     * it says when the messages were stamped, when quiet hours ended and the config. Restored (long
     * after that end), the held messages are delivered at once, each once, with their send time,
     * and count: a fifth message that day is rejected, one the next day allowed.
     */
    @Test
    @Timeout(240)
    void theSavepointOfRelease03DeliversItsHeldMessagesOnce() throws Exception {
        Path savepoint = SAVEPOINTS.resolve("freqcap-0.3-held").toAbsolutePath();
        assertTrue(Files.exists(savepoint.resolve("_metadata")), "committed savepoint");
        var held = Json.MAPPER.readTree(savepoint.resolve("held.json").toFile());
        long t0 = held.get("t0").asLong();
        long end = held.get("end").asLong();
        String config = held.get("limits").asText();
        List<Input> before = heldBefore(t0);
        List<Input> after = new ArrayList<>();
        for (int u = 0; u < USERS; u++) {
            // After quiet hours, the same day: over the cap. When the window has passed the
            // held three (their send time plus a day, never after --max-future): allowed.
            long late = end + 3_600_000L;
            after.add(Traffic.pushMessage(10_000 + u, u, "m-" + u + "-late", late));
            after.add(
                    Traffic.pushMessage(
                            20_000 + u,
                            u,
                            "m-" + u + "-next",
                            end + io.freqcap.schema.Instants.DAY));
        }
        List<Input> all = concat(before, after);
        try (EmbeddedRedis redis = EmbeddedRedis.start(tmp.resolve("redis"), false)) {
            JobClient job = start(redis, savepoint.toUri().toString(), config, HELD, all);
            try {
                var out = outputs(HELD, after.size() + 3 * USERS);
                Map<Integer, String> decided = decisions(out, HELD);
                assertEquals(after.size() + 3 * USERS, decided.size(), "held ones, then new ones");
                Map<Integer, String> expected = decisionCore(all, config);
                for (Input in : all) {
                    if (decided.containsKey(in.seq)) {
                        assertEquals(expected.get(in.seq), decided.get(in.seq), "input " + in.seq);
                    }
                }
                for (ConsumerRecord<byte[], byte[]> r : out.get(HELD + "-deliveries")) {
                    int seq = Json.MAPPER.readTree(r.value()).get("seq").asInt();
                    String sendAt = JobOutputs.header(r, "freqcap-send-at");
                    assertEquals(seq < 10_000 ? Long.toString(end) : null, sendAt, "input " + seq);
                }
                assertEquals(
                        USERS,
                        after.stream().filter(in -> decided.get(in.seq).equals("REJECTED")).count(),
                        "the held messages count: that day's fifth is over the cap");
            } finally {
                KafkaPipelineSupport.cancel(job);
            }
        }
    }

    /** Four messages a user a minute apart from {@code t0}, inside quiet hours. */
    static List<Input> heldBefore(long t0) {
        List<Input> out = new ArrayList<>();
        for (int k = 0; k < 4; k++) {
            for (int u = 0; u < USERS; u++) {
                out.add(
                        Traffic.pushMessage(
                                k * USERS + u, u, "m-" + u + "-" + k, t0 + k * 60_000L));
            }
        }
        return out;
    }

    /**
     * Writes the held-messages savepoint: {@code -Dfreqcap.writeHeldSavepoint=0.3}. Quiet hours
     * (UTC) end at the first whole minute two and a half minutes away; the savepoint is taken
     * before then.
     */
    @Test
    @Timeout(240)
    @EnabledIfSystemProperty(named = "freqcap.writeHeldSavepoint", matches = "\\d+\\.\\d+")
    void writeTheHeldMessagesSavepoint() throws Exception {
        Path target =
                SAVEPOINTS.resolve(
                        "freqcap-" + System.getProperty("freqcap.writeHeldSavepoint") + "-held");
        long now = System.currentTimeMillis();
        long end = (now + 150_000) / 60_000 * 60_000 + 60_000;
        long t0 = now / 60_000 * 60_000 - 10 * 60_000L;
        String config =
                Traffic.quietHoursConfig(
                        3,
                        java.time.Instant.ofEpochMilli(end - 3 * 3_600_000L),
                        java.time.Instant.ofEpochMilli(end));
        List<Input> before = heldBefore(t0);
        try (EmbeddedRedis redis = EmbeddedRedis.start(tmp.resolve("redis"), false)) {
            JobClient job = start(redis, null, config, HELD, before);
            assertEquals(
                    USERS,
                    decisions(outputs(HELD, USERS), HELD).size(),
                    "the fourths rejected, the rest held");
            String path = KafkaPipelineSupport.settledSavepoint(job, tmp);
            assertTrue(System.currentTimeMillis() < end, "the savepoint came before the send time");
            KafkaPipelineSupport.copyHeldSavepoint(path, target, t0, end, config);
        }
    }

    /** Decision by input seq, from both output topics. */
    static Map<Integer, String> decisions(Map<String, List<ConsumerRecord<byte[], byte[]>>> out)
            throws Exception {
        return decisions(out, NAME);
    }

    static Map<Integer, String> decisions(
            Map<String, List<ConsumerRecord<byte[], byte[]>>> out, String name) throws Exception {
        Map<Integer, String> bySeq = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : out.get(name + "-deliveries")) {
            int seq = Json.MAPPER.readTree(r.value()).get("seq").asInt();
            assertTrue(bySeq.put(seq, "ALLOWED") == null, "two outputs for " + seq);
        }
        for (ConsumerRecord<byte[], byte[]> r : out.get(name + "-audit")) {
            var a = Json.MAPPER.readTree(r.value());
            int seq = a.get("message").get("seq").asInt();
            assertTrue(
                    bySeq.put(seq, a.get("decision").asText()) == null, "two outputs for " + seq);
        }
        return bySeq;
    }

    /** The decision core's decision on every input, in partition order. */
    static Map<Integer, String> decisionCore(List<Input> inputs) throws Exception {
        return decisionCore(inputs, CONFIG);
    }

    /** The same under {@code json}, held messages counted at their send times. */
    static Map<Integer, String> decisionCore(List<Input> inputs, String json) throws Exception {
        Map<Integer, String> out = new HashMap<>();
        Traffic.decisionCore(inputs, json).forEach((seq, v) -> out.put(seq, v.decision().name()));
        return out;
    }
}
