package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.testutils.FailOnce;
import io.freqcap.job.testutils.FailingOnceJob;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.schema.Records;
import io.freqcap.schema.common.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Preferences and receipts on a real broker, wired as {@link FreqcapMain} wires them (contract.md
 * §1, §10, §11): a compacted preferences topic written before the job starts is read from its
 * beginning (an opt-out in force, a tombstone that cleared one, a stale version ignored, an
 * unreadable record audited); a failed push's retry with the same messageId is ALLOWED; a held SMS
 * is CANCELLED by an opt-out; after a stop with a savepoint and a resume at parallelism 2 the
 * preferences still hold; a job started again without state reads them again from the topic.
 *
 * <p>Parallelism 1 at first, so that a sentinel record (an unreadable one, audited) read after
 * others of its topic shows those were applied: two topics have no common order (§10).
 */
class PreferencesITCase {
    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 4);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    static final long MINUTE = 60_000;

    /** One a day; SMS is quiet until half an hour from now, and a rule holds up to an hour. */
    static String config(Instant now) {
        return Traffic.quietHoursConfig(1, now.minusSeconds(7200), now.plusSeconds(1800), "sms");
    }

    void send(String topic, String key, String value) throws Exception {
        try (KafkaProducer<byte[], byte[]> p =
                new KafkaProducer<>(Traffic.producerProps(kafka.bootstrapServers()))) {
            p.send(
                            new ProducerRecord<>(
                                    topic,
                                    key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                                    value == null ? null : value.getBytes(StandardCharsets.UTF_8)))
                    .get();
        }
    }

    void message(String name, String id, long user, String channel, long t) throws Exception {
        send(
                name + "-in",
                Long.toString(user),
                Records.message(id, user, t).channel(channel).json());
    }

    JobClient start(Configuration options, String config, String savepoint) throws Exception {
        return KafkaPipelineSupport.start(
                KafkaPipelineSupport.testEnv(options, tmp, savepoint),
                options,
                config,
                "freqcap-preferences");
    }

    /** The preferences topic, compacted as contract.md §10 asks, and the receipts topic. */
    static void createTopics(String prefs, String receipts) throws Exception {
        kafka.createCompactedTopics(1, List.of(prefs));
        kafka.createTopics(1, List.of(receipts));
    }

    /** The options of the job named {@code name} again, its topics and limits made before. */
    Configuration optionsAgain(String name, List<String> extra) throws Exception {
        List<String> all =
                new ArrayList<>(
                        KafkaPipelineSupport.args(kafka, name, tmp.resolve(name + "-limits.json")));
        all.addAll(extra);
        return CommandLine.parse(all.toArray(new String[0]), List.of());
    }

    /**
     * Each message's outputs, by messageId: {@code ALLOWED} for a delivery, else the decision and
     * the scopes of its violations ({@code REJECTED [preference:opt-out, all]}); records without a
     * messageId (INVALID_CONTROL) are counted by their source topic in {@code invalid}.
     */
    static Map<String, List<String>> outcomes(
            Map<String, List<ConsumerRecord<byte[], byte[]>>> out,
            String name,
            Map<String, Integer> invalid)
            throws Exception {
        Map<String, List<String>> outcomes = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : out.get(name + "-deliveries")) {
            outcomes.computeIfAbsent(
                            Json.MAPPER.readTree(r.value()).get("messageId").asText(),
                            k -> new ArrayList<>())
                    .add("ALLOWED");
        }
        for (ConsumerRecord<byte[], byte[]> r : out.get(name + "-audit")) {
            JsonNode a = Json.MAPPER.readTree(r.value());
            if (!a.has("messageId")) {
                invalid.merge(a.at("/source/topic").asText(a.toString()), 1, Integer::sum);
                continue;
            }
            outcomes.computeIfAbsent(a.get("messageId").asText(), k -> new ArrayList<>())
                    .add(
                            a.get("decision").asText()
                                    + " "
                                    + a.path("violations").findValuesAsText("scope"));
        }
        return outcomes;
    }

    void await(String topic, String text) {
        JobOutputs.awaitRecordsContaining(
                kafka.bootstrapServers(), topic, text, 1, Duration.ofSeconds(90));
    }

    @Test
    @Timeout(300)
    void preferencesAndReceiptsHoldOnARealBrokerAcrossARescaleAndAFreshStart() throws Exception {
        String name = "prefs";
        Instant now = Instant.now();
        String config = config(now);
        String prefs = name + "-preferences";
        String receipts = name + "-receipts";
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--parallelism",
                                "1",
                                "--preferences-topic",
                                prefs,
                                "--receipts-topic",
                                receipts));
        Configuration options =
                KafkaPipelineSupport.jobOptions(
                        kafka, tmp, name, config, 2, args.toArray(new String[0]));
        createTopics(prefs, receipts);
        // Written before the job exists: a job without state reads them from the beginning.
        String optOutSms = "{\"userId\":%d,\"version\":%d,\"optOut\":{\"channels\":[\"%s\"]}}";
        send(prefs, "1", String.format(optOutSms, 1, 1, "sms"));
        send(prefs, "2", String.format(optOutSms, 2, 1, "email"));
        send(prefs, "2", null); // cleared
        long paused = now.toEpochMilli() + 86_400_000L;
        send(prefs, "3", "{\"userId\":3,\"version\":1,\"pausedUntil\":" + paused + "}");
        send(prefs, "7", String.format(optOutSms, 7, 2, "push"));
        send(prefs, "7", "{\"userId\":7,\"version\":1}"); // older: ignored
        send(prefs, "9", "{not json");

        long t = now.toEpochMilli();
        JobClient job = start(options, config, null);
        try {
            await(name + "-audit", "\"topic\":\"" + prefs + "\"");
            message(name, "m-1", 1, "sms", t);
            message(name, "m-2", 2, "email", t);
            message(name, "m-3", 3, "push", t);
            message(name, "m-7", 7, "push", t);
            message(name, "m-5", 5, "push", t);
            message(name, "m-8", 8, "sms", t); // held for the end of quiet hours
            await(name + "-deliveries", "\"messageId\":\"m-5\"");

            send(receipts, "5", "{\"messageId\":\"m-5\",\"userId\":5,\"status\":\"failed\"}");
            send(receipts, "5", "{\"messageId\":\"m-5\",\"userId\":5,\"status\":\"delivered\"}");
            send(receipts, null, "{\"status\":\"failed\"}");
            await(name + "-audit", "\"topic\":\"" + receipts + "\"");
            message(name, "m-5", 5, "push", t + MINUTE); // the retry, same id
            message(name, "m-5b", 5, "push", t + 2 * MINUTE); // the day's place is the retry's
            send(prefs, "8", String.format(optOutSms, 8, 1, "sms"));
            await(name + "-audit", "\"reason\":\"opted out of channel sms\"");

            String savepoint = KafkaPipelineSupport.stopWithSavepoint(job, tmp);
            args.set(args.indexOf("--parallelism") + 1, "2");
            job = start(optionsAgain(name, args), config, savepoint);
            message(name, "m-1b", 1, "sms", t + 3 * MINUTE);
            message(name, "m-7b", 7, "push", t + 3 * MINUTE);
            message(name, "m-2b", 2, "email", t + 86_400_000L); // a day later: allowed
            // 11 decisions (m-5 twice), 2 unreadable records
            var out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(), name, 13, Duration.ofSeconds(90));
            KafkaPipelineSupport.cancel(job);

            // A job started without state (its own group and topics) reads the preferences again
            // from the topic's beginning: its sentinel, the unreadable one, comes last.
            String fresh = name + "-fresh";
            List<String> freshArgs = new ArrayList<>(args);
            freshArgs.set(freshArgs.indexOf(receipts), fresh + "-receipts");
            Configuration freshOptions =
                    KafkaPipelineSupport.jobOptions(
                            kafka, tmp, fresh, config, 2, freshArgs.toArray(new String[0]));
            kafka.createTopics(1, List.of(fresh + "-receipts"));
            job = start(freshOptions, config, null);
            await(fresh + "-audit", "\"topic\":\"" + prefs + "\"");
            message(fresh, "m-1c", 1, "email", t);
            message(fresh, "m-7c", 7, "push", t);
            message(fresh, "m-2c", 2, "email", t);
            var freshOut =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(), fresh, 4, Duration.ofSeconds(90));
            out.get(name + "-deliveries").addAll(freshOut.get(fresh + "-deliveries"));
            out.get(name + "-audit").addAll(freshOut.get(fresh + "-audit"));

            Map<String, Integer> invalid = new HashMap<>();
            Map<String, List<String>> outcomes = outcomes(out, name, invalid);
            // The unreadable preference is audited by each job that reads the topic from its
            // beginning.
            assertEquals(Map.of(prefs, 2, receipts, 1), invalid);
            Map<String, List<String>> want = new HashMap<>();
            // sms is quiet now as well: an opt-out reports what else the message breaks
            want.put("m-1", List.of("REJECTED [preference:opt-out, quiet-hours]"));
            want.put("m-2", List.of("ALLOWED"));
            want.put("m-3", List.of("REJECTED [preference:paused]"));
            want.put("m-7", List.of("REJECTED [preference:opt-out]"));
            // the first try, then its retry after the failed receipt
            want.put("m-5", List.of("ALLOWED", "ALLOWED"));
            want.put("m-5b", List.of("REJECTED [all]"));
            want.put("m-8", List.of("CANCELLED []"));
            want.put("m-1b", List.of("REJECTED [preference:opt-out, quiet-hours]"));
            want.put("m-7b", List.of("REJECTED [preference:opt-out]"));
            want.put("m-2b", List.of("ALLOWED"));
            want.put("m-1c", List.of("ALLOWED")); // user 1 opted out of sms only
            want.put("m-7c", List.of("REJECTED [preference:opt-out]"));
            want.put("m-2c", List.of("ALLOWED"));
            assertEquals(want, outcomes);
            assertTrue(
                    System.currentTimeMillis() < now.toEpochMilli() + 1800_000,
                    "m-8 was cancelled before its send time");
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }

    /**
     * A failure while preferences and receipts are in force: the job restarts from a checkpoint
     * that holds them (a checkpoint taken after the receipts' sentinel was audited holds every
     * receipt before it), and every message still ends in exactly one output, decided as they say.
     */
    @Test
    @Timeout(300)
    void preferencesAndReceiptsSurviveAFailure() throws Exception {
        String name = "prefs-fail";
        String prefs = name + "-preferences";
        String receipts = name + "-receipts";
        String config = Traffic.perDay(2);
        Configuration options =
                KafkaPipelineSupport.jobOptions(
                        kafka,
                        tmp,
                        name,
                        config,
                        2,
                        "--preferences-topic",
                        prefs,
                        "--receipts-topic",
                        receipts);
        createTopics(prefs, receipts);
        int users = 100;
        for (int u = 0; u < users; u += 2) {
            send(
                    prefs,
                    Integer.toString(u),
                    "{\"userId\":"
                            + u
                            + ",\"version\":1,"
                            + "\"optOut\":{\"channels\":[\"sms\"]}}");
        }
        for (int u = 0; u < 10; u += 2) {
            send(prefs, Integer.toString(u), null);
        }
        send(prefs, "end", "{\"version\":1}"); // unreadable: the sentinel
        long t = Instant.now().toEpochMilli();
        FailOnce.reset();
        StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp);
        FailingOnceJob.failingOnceJobWithUserInputs(
                env,
                options,
                2 * users + users / 2,
                io.freqcap.operators.capping.CappingSettings.of(config));
        JobClient job = env.executeAsync("freqcap-preferences-failure");
        try {
            await(name + "-audit", "\"topic\":\"" + prefs + "\"");
            for (int u = 0; u < users; u++) {
                message(name, "a-" + u, u, "push", t);
                message(name, "s-" + u, u, "sms", t + 1000);
            }
            JobOutputs.readOutputs(
                    kafka.bootstrapServers(), name, 2 * users + 1, Duration.ofSeconds(90));
            for (int u = 0; u < users; u += 3) {
                send(
                        receipts,
                        Integer.toString(u),
                        "{\"messageId\":\"a-"
                                + u
                                + "\",\"userId\":"
                                + u
                                + ",\"status\":\"failed\"}");
            }
            send(receipts, null, "{}");
            await(name + "-audit", "\"topic\":\"" + receipts + "\"");
            // the retries; the failure comes in their middle
            for (int u = 0; u < users; u++) {
                message(name, "a-" + u, u, "push", t + 2000);
            }
            var out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(), name, 3 * users + 2, Duration.ofSeconds(120));
            assertTrue(FailOnce.FAILED.get(), "the failure was injected");
            Map<String, List<String>> outcomes = outcomes(out, name, new HashMap<>());
            for (int u = 0; u < users; u++) {
                boolean optedOut = u % 2 == 0 && u >= 10;
                assertEquals(
                        List.of(optedOut ? "REJECTED [preference:opt-out]" : "ALLOWED"),
                        outcomes.get("s-" + u),
                        "sms of user " + u);
                // the first try, then the retry: decided anew where the first failed
                List<String> a = new ArrayList<>(outcomes.get("a-" + u));
                a.sort(null);
                assertEquals(
                        u % 3 == 0
                                ? List.of("ALLOWED", "ALLOWED")
                                : List.of("ALLOWED", "DUPLICATE []"),
                        a,
                        "push of user " + u);
            }
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }

    /**
     * An upgrade: a job that ran without the two topics is stopped with a savepoint and resumed
     * with them. The histories come back; the preferences topic, which has no offsets in the
     * savepoint, is read from its beginning.
     */
    @Test
    @Timeout(300)
    void aJobRestoredWithoutThemTakesTheTopicsOn() throws Exception {
        String name = "prefs-upgrade";
        String prefs = name + "-preferences";
        String config = Traffic.perDay(1);
        Configuration before = KafkaPipelineSupport.jobOptions(kafka, tmp, name, config, 2);
        createTopics(prefs, name + "-receipts");
        long t = Instant.now().toEpochMilli();
        JobClient job = start(before, config, null);
        try {
            message(name, "m-1", 1, "push", t);
            message(name, "m-2", 2, "push", t);
            await(name + "-deliveries", "\"messageId\":\"m-2\"");
            String savepoint = KafkaPipelineSupport.stopWithSavepoint(job, tmp);
            send(prefs, "2", "{\"userId\":2,\"version\":1,\"optOut\":{\"channels\":[\"sms\"]}}");
            send(prefs, "end", "{}"); // unreadable: the sentinel
            List<String> topics =
                    List.of("--preferences-topic", prefs, "--receipts-topic", name + "-receipts");
            job = start(optionsAgain(name, topics), config, savepoint);
            await(name + "-audit", "\"topic\":\"" + prefs + "\"");
            message(name, "m-1b", 1, "push", t + MINUTE); // the history came back: the day is full
            message(name, "m-2b", 2, "sms", t + 2 * MINUTE);
            var out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(), name, 5, Duration.ofSeconds(90));
            assertEquals(
                    Map.of(
                            "m-1", List.of("ALLOWED"),
                            "m-2", List.of("ALLOWED"),
                            "m-1b", List.of("REJECTED [all]"),
                            "m-2b", List.of("REJECTED [preference:opt-out, all]")),
                    outcomes(out, name, new HashMap<>()));
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }
}
