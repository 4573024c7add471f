package io.freqcap.job;

import static io.freqcap.job.testutils.Traffic.config;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.segment.SegmentBitmap;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * No record can stop the job: hostile and oversized records on all three input topics, through a
 * real broker, with restarts turned off (any failure would fail the job). Each gets its one bounded
 * output, other traffic keeps being decided, and the job is still running at the end.
 */
class HostileInputITCase {
    static final int PARTITIONS = 2;
    static final int MAX_RECORD_BYTES = 100_000;
    static final String CONFIG = config(1, 3, 10, 1);

    static final Map<String, String> EXPECTED_ERRORS =
            Map.of(
                    "zero", "not a regular file",
                    "huge", "2000000000 bytes, over --max-segment-bytes 1000000",
                    "fifo", "not a regular file",
                    "passwd", "not a portable Roaring bitmap");

    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 4);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    /** The test's job environment: no restarts, so that one failure fails the job. */
    StreamExecutionEnvironment env(Configuration options) {
        StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp);
        Configuration noRestarts = new Configuration();
        noRestarts.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        env.configure(noRestarts);
        return env;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String message(String id, long user, long t, String payload) {
        return String.format(
                "{\"messageId\":\"%s\",\"userId\":%d,\"channel\":\"push\",\"timestamp\":%d,"
                        + "\"payload\":\"%s\"}",
                id, user, t, payload);
    }

    static String load(String id, long version, String uri) {
        return String.format(
                "{\"segmentId\":\"%s\",\"version\":%d,\"priority\":10,\"format\":\"roaring32\","
                        + "\"uri\":\"%s\"}",
                id, version, uri);
    }

    static void produce(String topic, List<byte[]> values) throws Exception {
        var props = Traffic.producerProps(kafka.bootstrapServers());
        props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, "1048000");
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(props)) {
            for (byte[] v : values) {
                p.send(new ProducerRecord<>(topic, 0, null, v)).get();
            }
        }
    }

    /** Options of a job of this test named {@code name}: its topics made, its config written. */
    Configuration jobOptions(String name, String... extra) throws Exception {
        return KafkaPipelineSupport.jobOptions(kafka, tmp, name, CONFIG, PARTITIONS, extra);
    }

    @Test
    @Timeout(240)
    void hostileRecordsOnEveryTopicNeverStopTheJob() throws Exception {
        String name = "hostile";
        Path segments = Files.createDirectories(tmp.resolve("segments"));
        Path huge = segments.resolve("huge.roaring");
        try (RandomAccessFile f = new RandomAccessFile(huge.toFile(), "rw")) {
            f.setLength(2_000_000_000L); // sparse
        }
        Path fifo = segments.resolve("fifo");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        Configuration options =
                jobOptions(
                        name,
                        "--max-record-bytes",
                        Integer.toString(MAX_RECORD_BYTES),
                        "--max-segment-bytes",
                        "1000000");

        long t0 = Traffic.START;
        Random random = new Random(5);
        List<byte[]> inputs = new ArrayList<>();
        // normal traffic: 40 users, 5 a day each, cap 3 a day
        for (int i = 0; i < 200; i++) {
            inputs.add(utf8(message("ok-" + i, i % 40, t0 + i * 1000L, "hello")));
        }
        byte[] bigMalformed = new byte[90_000];
        random.nextBytes(bigMalformed);
        inputs.add(bigMalformed);
        byte[] tooLarge = utf8(message("too-large", 41, t0, "x".repeat(150_000)));
        inputs.add(tooLarge);
        byte[] fits = utf8(message("fits", 42, t0, "y".repeat(95_000)));
        inputs.add(fits);
        // user 43 is capped at 3 a day: the fourth, of 99,000 bytes, is REJECTED and its audit
        // record must leave the message out
        for (int i = 0; i < 3; i++) {
            inputs.add(utf8(message("small-" + i, 43, t0 + i, "z")));
        }
        byte[] rejectedBig = utf8(message("rejected-big", 43, t0 + 10, "w".repeat(99_700)));
        assertTrue(rejectedBig.length <= MAX_RECORD_BYTES);
        inputs.add(rejectedBig);
        // mutated messages: each is decided or MALFORMED, one output each
        for (int i = 0; i < 300; i++) {
            byte[] b = utf8(message("fz-" + i, 100 + i % 20, t0 + i, "p"));
            b[random.nextInt(b.length)] ^= (byte) (1 << random.nextInt(8));
            inputs.add(b);
        }

        List<byte[]> configs = new ArrayList<>();
        String invalidHuge =
                "{\"version\": 9, \"rules\": [], \"pad\": \"" + "q".repeat(885_000) + "\"}";
        configs.add(utf8(invalidHuge));
        for (int i = 0; i < 100; i++) {
            byte[] c = utf8(CONFIG.replace("\"version\":1", "\"version\":" + (2 + i)));
            c[random.nextInt(c.length)] ^= (byte) (1 << random.nextInt(8));
            configs.add(c);
        }
        List<byte[]> segmentUpdates = new ArrayList<>();
        segmentUpdates.add(utf8(load("zero", 1, "file:///dev/zero")));
        segmentUpdates.add(utf8(load("huge", 1, huge.toUri().toString())));
        segmentUpdates.add(utf8(load("fifo", 1, fifo.toUri().toString())));
        segmentUpdates.add(utf8(load("passwd", 1, "file:///etc/passwd")));
        String inline =
                "{\"segmentId\":\"s\",\"version\":1,\"format\":\"roaring32\",\"bitmap\":\""
                        + Base64.getEncoder()
                                .encodeToString(
                                        SegmentBitmap.of(1, 2, 3)
                                                .write(SegmentBitmap.Format.ROARING32))
                        + "\"}";
        for (int i = 0; i < 100; i++) {
            byte[] s = utf8(inline);
            s[random.nextInt(s.length)] ^= (byte) (1 << random.nextInt(8));
            segmentUpdates.add(s);
        }

        StreamExecutionEnvironment env = env(options);
        FreqcapMain.wireKafka(env, JobSettings.from(options, LimitConfig.parse(CONFIG), null));
        JobClient job = env.executeAsync("freqcap-hostile");
        try {
            produce(name + "-segments", segmentUpdates);
            produce(name + "-config", configs);
            produce(name + "-in", inputs);
            var out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(),
                            name,
                            inputs.size() + 5,
                            Duration.ofSeconds(120));
            assertEquals(JobStatus.RUNNING, job.getJobStatus().get(), "never failed");

            List<ConsumerRecord<byte[], byte[]>> deliveries = out.get(name + "-deliveries");
            List<JsonNode> decisions = new ArrayList<>();
            List<JsonNode> invalidControl = new ArrayList<>();
            Map<String, JsonNode> byMessageId = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> r : out.get(name + "-audit")) {
                assertTrue(r.value().length <= MAX_RECORD_BYTES, r.value().length + " bytes");
                JsonNode a = Json.MAPPER.readTree(r.value());
                if (a.get("decision").asText().equals("INVALID_CONTROL")) {
                    invalidControl.add(a);
                } else {
                    decisions.add(a);
                    if (a.has("messageId")) {
                        byMessageId.put(a.get("messageId").asText(), a);
                    }
                }
            }
            assertEquals(
                    inputs.size(), deliveries.size() + decisions.size(), "one output per input");
            Map<String, byte[]> delivered = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> r : deliveries) {
                try {
                    delivered.put(
                            Json.MAPPER.readTree(r.value()).get("messageId").asText(), r.value());
                } catch (Exception e) {
                    // a mutated message that parsed; its id may not be readable as JSON here
                }
            }

            // the 90 KB malformed input: cut to fit, with its full length
            JsonNode malformed =
                    decisions.stream()
                            .filter(a -> a.path("rawBytes").asInt() == 90_000)
                            .findFirst()
                            .orElseThrow();
            assertEquals("MALFORMED", malformed.get("decision").asText());
            assertTrue(malformed.get("rawTruncated").asBoolean());
            // the 150 KB valid message: too large to deliver byte for byte
            JsonNode large =
                    decisions.stream()
                            .filter(a -> a.path("rawBytes").asInt() == tooLarge.length)
                            .findFirst()
                            .orElseThrow();
            assertTrue(
                    large.get("error").asText().startsWith("record too large"), large.toString());
            // the 95 KB message fits: delivered byte for byte
            assertArrayEquals(fits, delivered.get("fits"));
            // a REJECTED record of a 99.7 KB message: bounded, message left out
            JsonNode rejected = byMessageId.get("rejected-big");
            assertEquals("REJECTED", rejected.get("decision").asText());
            assertFalse(rejected.has("message"));
            assertEquals(rejectedBig.length, rejected.get("rawBytes").asInt());
            // normal traffic: 3 of each user's 5 a day
            long okDelivered = delivered.keySet().stream().filter(k -> k.startsWith("ok-")).count();
            assertEquals(120, okDelivered);

            // control records: the huge config and the four hostile files audited once each
            JsonNode hugeConfig =
                    invalidControl.stream()
                            .filter(a -> a.path("rawBytes").asInt() == invalidHuge.length())
                            .findFirst()
                            .orElseThrow();
            assertTrue(hugeConfig.get("rawTruncated").asBoolean());
            for (String id : List.of("zero", "huge", "fifo", "passwd")) {
                List<JsonNode> about =
                        invalidControl.stream()
                                .filter(
                                        a ->
                                                new String(
                                                                Base64.getDecoder()
                                                                        .decode(
                                                                                a.get("raw")
                                                                                        .asText()),
                                                                StandardCharsets.UTF_8)
                                                        .contains("\"segmentId\":\"" + id + "\""))
                                .toList();
                assertEquals(1, about.size(), id + ": " + about);
                String error = about.get(0).get("error").asText();
                assertTrue(error.contains(EXPECTED_ERRORS.get(id)), id + ": " + error);
                // /etc/passwd's first bytes read as a number were once in the error text
                assertFalse(error.contains("1953460082") || error.contains("root:"), error);
            }
            assertTrue(
                    invalidControl.size() >= 5 && invalidControl.size() <= 205,
                    invalidControl.size() + " INVALID_CONTROL");
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }
}
