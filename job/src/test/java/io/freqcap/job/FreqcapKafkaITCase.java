package io.freqcap.job;

import static io.freqcap.job.testutils.Traffic.config;
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
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
 * The whole job through a real Kafka broker on a MiniCluster at parallelism 2: one output per
 * input, read with read_committed, decisions equal to the decision core's, also across a failure.
 */
class FreqcapKafkaITCase {
    static final int PARTITIONS = 4;
    static final String CONFIG_V1 = config(1, 3, 10, 1);
    static final String CONFIG_V2 = config(2, 2, 8, 2);

    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 4);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    Configuration options(String name) throws Exception {
        return KafkaPipelineSupport.jobOptions(kafka, tmp, name, CONFIG_V1, PARTITIONS);
    }

    /**
     * Starts the job named {@code name} under {@code config} (its limits file holds {@link
     * #CONFIG_V1}, as {@link #options} writes it).
     */
    JobClient start(String name, String config, String jobName) throws Exception {
        return KafkaPipelineSupport.startJob(options(name), tmp, config, jobName);
    }

    void produce(String name, List<Input> inputs) throws Exception {
        Traffic.produce(kafka.bootstrapServers(), name + "-in", PARTITIONS, inputs);
    }

    static Map<Long, LimitConfig> configs() throws Exception {
        Map<Long, LimitConfig> m = new HashMap<>();
        m.put(1L, LimitConfig.parse(CONFIG_V1));
        m.put(2L, LimitConfig.parse(CONFIG_V2));
        return m;
    }

    /** Calendar limits in the users' zones, a category and a campaign limit, and a shadow. */
    static final String CALENDAR_CONFIG =
            "{\"version\":1,\"timezone\":\"Asia/Singapore\",\"rules\":[{\"segment\":\"*\","
                    + "\"limits\":[{\"calendar\":\"day\",\"max\":2},{\"window\":\"7d\",\"max\":6}],"
                    + "\"categories\":{\"promo\":[{\"calendar\":\"week\",\"max\":2}]},"
                    + "\"campaign\":[{\"window\":\"3d\",\"max\":1}]}],"
                    + "\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"calendar\":\"day\",\"max\":1}]}]},"
                    + "\"exempt\":[\"transactional\"]}";

    static final String[] ZONES = {
        null, "Asia/Kolkata", "America/New_York", "Australia/Lord_Howe", "Europe/London"
    };

    @Test
    @Timeout(300)
    void calendarLimitsInTheUsersZonesAndAShadowAreDecidedExactly() throws Exception {
        String name = "calendar";
        Configuration options =
                KafkaPipelineSupport.jobOptions(kafka, tmp, name, CALENDAR_CONFIG, PARTITIONS);
        List<Input> inputs = new java.util.ArrayList<>();
        for (Input in : Traffic.traffic(3, 20_000, 500, 30)) {
            Long user = Traffic.userOf(in);
            String zone = user == null ? null : ZONES[(int) (user % ZONES.length)];
            if (zone == null) {
                inputs.add(in);
                continue;
            }
            String json = new String(in.value, java.nio.charset.StandardCharsets.UTF_8);
            inputs.add(
                    new Input(
                            in.seq,
                            in.key,
                            json.replaceFirst(
                                            "\"timestamp\":",
                                            "\"timezone\":\"" + zone + "\",\"timestamp\":")
                                    .getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        }
        JobClient job =
                KafkaPipelineSupport.startJob(options, tmp, CALENDAR_CONFIG, "freqcap-calendar-it");
        try {
            produce(name, inputs);
            var out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(), name, inputs.size(), Duration.ofSeconds(180));
            Map<Integer, Output> outputs =
                    JobOutputs.checkOutputs(
                            inputs, out, name, Map.of(1L, LimitConfig.parse(CALENDAR_CONFIG)));
            long calendarRejections =
                    out.get(name + "-audit").stream()
                            .filter(r -> new String(r.value()).contains("\"calendar\":\"day\""))
                            .count();
            long shadowRejectedAllowed =
                    outputs.values().stream()
                            .filter(o -> o.decision().equals("ALLOWED"))
                            .filter(o -> "REJECTED".equals(o.shadow()))
                            .count();
            assertTrue(calendarRejections > 100, calendarRejections + " calendar rejections");
            assertTrue(shadowRejectedAllowed > 100, shadowRejectedAllowed + " allowed, shadow not");
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }

    @Test
    @Timeout(300)
    void everyInputYieldsOneExactDecisionAcrossAConfigUpdate() throws Exception {
        String name = "pipeline";
        List<Input> inputs = Traffic.traffic(1, 100_000, 3_000, 12);
        List<Input> firstHalf = inputs.subList(0, 50_000);
        List<Input> secondHalf = inputs.subList(50_000, inputs.size());

        JobClient job = start(name, CONFIG_V1, "freqcap-it");
        try {
            produce(name, firstHalf);
            // Wait until the job has decided some messages under version 1, then change the config.
            JobOutputs.readCommitted(
                    kafka.bootstrapServers(),
                    List.of(name + "-deliveries"),
                    1000,
                    Duration.ofSeconds(60));
            Traffic.send(
                    kafka.bootstrapServers(), name + "-config", "{\"version\": 2, \"rules\": []}");
            Traffic.send(kafka.bootstrapServers(), name + "-config", CONFIG_V2);
            Traffic.send(kafka.bootstrapServers(), name + "-config", CONFIG_V1);
            Traffic.send(kafka.bootstrapServers(), name + "-config", "{\"command\": \"reboot\"}");
            // The unknown command's audit record comes after v2 was applied (one config
            // partition, applied in order): v2 is in force before the second half is sent.
            JobOutputs.awaitRecordsContaining(
                    kafka.bootstrapServers(),
                    name + "-audit",
                    "unknown command",
                    1,
                    Duration.ofSeconds(60));
            produce(name, secondHalf);

            var out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(),
                            name,
                            inputs.size() + 3,
                            Duration.ofSeconds(180));
            List<ConsumerRecord<byte[], byte[]>> audits = out.get(name + "-audit");
            Map<Integer, Output> outputs =
                    JobOutputs.checkOutputs(
                            inputs, out.get(name + "-deliveries"), audits, configs());
            JobOutputs.checkNoIntervalOverfilled(inputs, outputs, configs());

            long invalidControl =
                    audits.stream()
                            .filter(r -> new String(r.value()).contains("INVALID_CONTROL"))
                            .count();
            assertEquals(
                    3,
                    invalidControl,
                    "bad config, stale version, unknown command: each audited once");
            Map<String, Long> byDecision = new HashMap<>();
            outputs.values()
                    .forEach(
                            o ->
                                    byDecision.merge(
                                            o.decision() + "@v" + o.configVersion(),
                                            1L,
                                            Long::sum));
            for (String d : List.of("ALLOWED", "REJECTED", "EXEMPT", "DUPLICATE", "STALE")) {
                assertTrue(
                        byDecision.getOrDefault(d + "@v1", 0L) > 0, d + " under v1: " + byDecision);
                assertTrue(
                        byDecision.getOrDefault(d + "@v2", 0L) > 0, d + " under v2: " + byDecision);
            }
            assertTrue(byDecision.getOrDefault("MALFORMED@v-1", 0L) > 300, byDecision.toString());
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }

    @Test
    @Timeout(180)
    void segmentUpdatesOnTheTopicChangeDecisionsForTheUsersTheyTouch() throws Exception {
        String name = "segments";
        String config =
                "{\"version\":1,\"rules\":["
                        + "{\"segment\":\"vip\",\"limits\":[{\"window\":\"1d\",\"max\":1}]},"
                        + "{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":3}]}]}";
        JobClient job = start(name, config, "freqcap-segments");
        String bootstrap = kafka.bootstrapServers();
        try {
            send(bootstrap, name + "-in", 7, "a1", 0);
            send(bootstrap, name + "-in", 7, "a2", 1);
            String bitmap =
                    java.util.Base64.getEncoder()
                            .encodeToString(
                                    io.freqcap.schema.segment.SegmentBitmap.of(7, 8)
                                            .write(
                                                    io.freqcap.schema.segment.SegmentBitmap.Format
                                                            .ROARING32));
            Traffic.send(
                    bootstrap,
                    name + "-segments",
                    "{\"segmentId\":\"vip\",\"version\":1,\"priority\":10,\"format\":\"roaring32\",\"bitmap\":\""
                            + bitmap
                            + "\"}");
            // Probe with user 8 (also vip, one message each day) until the update is in force.
            boolean applied = false;
            for (int day = 1; day < 60 && !applied; day++) {
                send(bootstrap, name + "-in", 8, "probe" + day, day * 86_400_000L);
                var out =
                        JobOutputs.readCommitted(
                                bootstrap,
                                List.of(name + "-deliveries"),
                                2 + day,
                                Duration.ofSeconds(10));
                applied =
                        out.get(name + "-deliveries").stream()
                                .anyMatch(
                                        r ->
                                                "vip"
                                                        .equals(
                                                                JobOutputs.header(
                                                                        r,
                                                                        io.freqcap.schema.decision
                                                                                .Delivery
                                                                                .HEADER_SEGMENT)));
            }
            assertTrue(applied, "the segment update reached the capping tasks");
            // User 7 had two messages today under "*" (three a day); as a vip (one a day) a third
            // is over.
            send(bootstrap, name + "-in", 7, "a3", 2);
            send(bootstrap, name + "-in", 9, "b1", 2);
            var out = JobOutputs.readOutputs(bootstrap, name, 100, Duration.ofSeconds(20));
            var audit7 =
                    out.get(name + "-audit").stream()
                            .map(
                                    r ->
                                            new String(
                                                    r.value(),
                                                    java.nio.charset.StandardCharsets.UTF_8))
                            .filter(s -> s.contains("\"messageId\":\"a3\""))
                            .toList();
            assertEquals(1, audit7.size(), out.toString());
            assertTrue(
                    audit7.get(0).contains("\"decision\":\"REJECTED\"")
                            && audit7.get(0).contains("\"segment\":\"vip\""),
                    audit7.get(0));
            assertTrue(
                    out.get(name + "-deliveries").stream()
                            .anyMatch(
                                    r ->
                                            new String(
                                                                    r.value(),
                                                                    java.nio.charset
                                                                            .StandardCharsets.UTF_8)
                                                            .contains("\"b1\"")
                                                    && "*"
                                                            .equals(
                                                                    JobOutputs.header(
                                                                            r,
                                                                            io.freqcap.schema
                                                                                    .decision
                                                                                    .Delivery
                                                                                    .HEADER_SEGMENT))),
                    "a user the update did not touch keeps the * rule");
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }

    static void send(String bootstrap, String topic, long user, String id, long offsetMillis)
            throws Exception {
        String json =
                "{\"messageId\":\""
                        + id
                        + "\",\"userId\":"
                        + user
                        + ",\"channel\":\"push\",\"timestamp\":"
                        + (Traffic.START + offsetMillis)
                        + "}";
        try (var producer =
                new org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]>(
                        Traffic.producerProps(bootstrap))) {
            producer.send(
                            new org.apache.kafka.clients.producer.ProducerRecord<>(
                                    topic,
                                    String.valueOf(user)
                                            .getBytes(java.nio.charset.StandardCharsets.UTF_8),
                                    json.getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                    .get();
        }
    }

    @Test
    @Timeout(300)
    void exactlyOnceSurvivesAFailure() throws Exception {
        String name = "failover";
        Configuration options = options(name);
        List<Input> inputs = Traffic.traffic(2, 40_000, 1_000, 10);

        FailOnce.reset();
        StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp);
        FailingOnceJob.failingOnceJob(env, options, 15000, CappingSettings.of(CONFIG_V1), null);
        JobClient job = env.executeAsync("freqcap-failover");
        try {
            // Slowly, so that checkpoints complete while input still flows.
            for (int i = 0; i < inputs.size(); i += 5_000) {
                produce(name, inputs.subList(i, i + 5_000));
                Thread.sleep(700);
            }
            var out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(), name, inputs.size(), Duration.ofSeconds(180));
            assertTrue(FailOnce.FAILED.get(), "the failure was injected");
            assertEquals(JobStatus.RUNNING, job.getJobStatus().get());
            JobOutputs.checkOutputs(inputs, out, name, configs());
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }
}
