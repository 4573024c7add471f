package io.freqcap.job;

import static io.freqcap.schema.Instants.HOUR;
import static io.freqcap.schema.Instants.MINUTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.schema.Records;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.LimitConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
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
 * The three values of issue "values that hurt", as a new user sent them, through a real broker with
 * restarts off: one rule {@code *} of 1 message an hour, messages stamped near the wall clock, a
 * sweep every second.
 *
 * <ul>
 *   <li>user 5 at now, 40 users at now + 23 h (tomorrow's campaign), user 5 again at now + 60 s:
 *       REJECTED (the forward-dated messages once moved event time a day ahead and the sweep
 *       cleared user 5's history, so it was ALLOWED);
 *   <li>user 77 stamped in microseconds: MALFORMED, and user 77 unharmed (it was counted, and every
 *       later message of 77 was STALE for ever);
 *   <li>a config with 25,000 limits: INVALID_CONTROL, never an audit record too large to send (the
 *       job restarted for ever).
 * </ul>
 */
class ValuesThatHurtITCase {
    static final String ONE_AN_HOUR =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"1h\",\"max\":1}]}]}";

    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 4);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    static String message(String id, long user, long t) {
        return Records.message(id, user, t).json();
    }

    void produce(String topic, List<String> values) throws Exception {
        try (KafkaProducer<byte[], byte[]> p =
                new KafkaProducer<>(Traffic.producerProps(kafka.bootstrapServers()))) {
            for (String v : values) {
                p.send(new ProducerRecord<>(topic, null, v.getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
    }

    @Test
    @Timeout(180)
    void forwardDatedMicrosecondAndOversizedValuesCannotBreakACap() throws Exception {
        String name = "hurt";
        Configuration options =
                KafkaPipelineSupport.jobOptions(
                        kafka,
                        tmp,
                        name,
                        ONE_AN_HOUR,
                        1,
                        "--parallelism",
                        "1",
                        "--cleanup-interval",
                        "1s");
        StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp);
        Configuration noRestarts = new Configuration();
        noRestarts.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        env.configure(noRestarts);
        FreqcapMain.wireKafka(env, JobSettings.from(options, LimitConfig.parse(ONE_AN_HOUR), null));
        JobClient job = env.executeAsync("freqcap-values-that-hurt");
        try {
            long now = System.currentTimeMillis();
            StringBuilder limits = new StringBuilder();
            for (int i = 0; i < 25_000; i++) {
                limits.append(i == 0 ? "" : ",")
                        .append("{\"window\":\"")
                        .append(61 + i)
                        .append("m\",\"max\":1}");
            }
            produce(
                    name + "-config",
                    List.of(
                            "{\"version\":2,\"rules\":[{\"segment\":\"*\",\"limits\":["
                                    + limits
                                    + "]}]}"));
            JobOutputs.awaitRecordsContaining(
                    kafka.bootstrapServers(),
                    name + "-audit",
                    "at most 16 limits, got 25000",
                    1,
                    Duration.ofSeconds(60));

            List<String> first = new ArrayList<>();
            first.add(message("u5-a", 5, now));
            for (int u = 100; u < 140; u++) {
                first.add(message("tomorrow-" + u, u, now + 23 * HOUR));
            }
            first.add(message("u77-micros", 77, now * 1000));
            first.add(message("u77-a", 77, now + 2000));
            first.add(message("u9-a", 9, now + 10_000));
            first.add(message("u9-b", 9, now + 20_000));
            produce(name + "-in", first);
            JobOutputs.awaitRecordsContaining(
                    kafka.bootstrapServers(),
                    name + "-deliveries",
                    "tomorrow-139",
                    1,
                    Duration.ofSeconds(60));
            // Twenty sweeps at whatever event time the forward-dated messages made. What is
            // asserted is that nothing happens, so only time can tell.
            Thread.sleep(20_000);
            produce(name + "-in", List.of(message("u5-b", 5, now + MINUTE)));

            int expected = 1 + first.size() + 1;
            var out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(), name, expected, Duration.ofSeconds(60));
            assertEquals(JobStatus.RUNNING, job.getJobStatus().get(), "never failed");
            Map<String, String> decision = new HashMap<>();
            Map<String, JsonNode> audit = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> r : out.get(name + "-deliveries")) {
                decision.put(Json.MAPPER.readTree(r.value()).get("messageId").asText(), "ALLOWED");
            }
            for (ConsumerRecord<byte[], byte[]> r : out.get(name + "-audit")) {
                assertTrue(r.value().length <= 1_000_000, r.value().length + " bytes");
                JsonNode a = Json.MAPPER.readTree(r.value());
                String id =
                        a.has("messageId")
                                ? a.get("messageId").asText()
                                : a.get("decision").asText().equals("MALFORMED")
                                        ? "u77-micros"
                                        : "config-v2";
                decision.put(id, a.get("decision").asText());
                audit.put(id, a);
            }
            assertEquals(expected, decision.size(), decision.toString());
            assertEquals("REJECTED", decision.get("u5-b"), "1 an hour, whatever tomorrow holds");
            assertEquals("ALLOWED", decision.get("u5-a"));
            assertEquals("MALFORMED", decision.get("u77-micros"));
            assertEquals(
                    "timestamp " + now * 1000 + " is more than 1d after the job's clock",
                    audit.get("u77-micros").get("error").asText());
            assertEquals("ALLOWED", decision.get("u77-a"), "77 unharmed");
            assertEquals("INVALID_CONTROL", decision.get("config-v2"));
            assertEquals(
                    "rules[0].limits: at most 16 limits, got 25000",
                    audit.get("config-v2").get("error").asText());
            assertEquals("ALLOWED", decision.get("u9-a"));
            assertEquals("REJECTED", decision.get("u9-b"));
            assertEquals(1, audit.get("u9-b").get("configVersion").asInt(), "v1 still in force");
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }
}
