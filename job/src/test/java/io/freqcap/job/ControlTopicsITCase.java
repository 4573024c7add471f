package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.schema.Records;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.segment.SegmentBitmap;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control topics on a fresh start (contract.md §8): a job started without state, with a reused
 * group id whose control consumers already committed offsets past every record, and {@code
 * --limits} v1, still ends up on the v5 and the segment the topics hold.
 */
class ControlTopicsITCase {
    static final String V1 =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"1d\",\"max\":1}]}]}";
    static final String V5 =
            "{\"version\":5,\"rules\":[{\"segment\":\"vip\",\"limits\":"
                    + "[{\"window\":\"1d\",\"max\":100}]},{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"1d\",\"max\":1}]}]}";
    static final long VIP = 7;

    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 4);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    /** Commits the end offsets of {@code topic} for {@code group}, as a job run before had. */
    void commitEnd(Admin admin, String group, String topic) throws Exception {
        TopicPartition tp = new TopicPartition(topic, 0);
        long end =
                admin.listOffsets(Map.of(tp, OffsetSpec.latest()))
                        .partitionResult(tp)
                        .get()
                        .offset();
        assertNotEquals(0, end);
        admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(end))).all().get();
    }

    @Test
    @Timeout(180)
    void aFreshStartWithAReusedGroupIdReadsTheControlTopicsFromTheBeginning() throws Exception {
        String name = "fresh";
        Configuration options = KafkaPipelineSupport.jobOptions(kafka, tmp, name, V1, 1);
        String bootstrap = kafka.bootstrapServers();
        String segment =
                "{\"segmentId\":\"vip\",\"version\":1,\"format\":\"roaring32\",\"bitmap\":\""
                        + Base64.getEncoder()
                                .encodeToString(
                                        SegmentBitmap.of(VIP).write(SegmentBitmap.Format.ROARING32))
                        + "\"}";
        Traffic.send(bootstrap, name + "-config", V5);
        Traffic.send(bootstrap, name + "-segments", segment);
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            // What a job that ran before with this group id left behind.
            commitEnd(admin, name + "-config", name + "-config");
            commitEnd(admin, name + "-segment", name + "-segments");
        }

        StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp);
        FreqcapMain.wireKafka(env, JobSettings.from(options, LimitConfig.parse(V1), null));
        JobClient job = env.executeAsync("freqcap-fresh-start");
        try {
            // Two messages of the vip user a minute apart, again and again, until both are
            // decided under v5's vip rule (allowed); under v1 (1 a day) the second is REJECTED.
            long t = Traffic.START;
            Map<String, JsonNode> seen = new HashMap<>();
            boolean inForce = false;
            for (int round = 0; round < 20 && !inForce; round++) {
                String a = "r" + round + "-a";
                String b = "r" + round + "-b";
                t += 2 * 86_400_000L; // each round on its own days
                Traffic.send(bootstrap, name + "-in", message(a, t));
                Traffic.send(bootstrap, name + "-in", message(b, t + 60_000));
                read(bootstrap, name, seen, b, Duration.ofSeconds(30));
                JsonNode second = seen.get(b);
                inForce =
                        second.get("decision").asText().equals("ALLOWED")
                                && second.get("configVersion").asLong() == 5
                                && second.get("segment").asText().equals("vip");
            }
            assertTrue(inForce, "v5 and segment vip in force: " + seen);
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }

    static String message(String id, long t) {
        return Records.message(id, VIP, t).json();
    }

    /**
     * Reads both output topics (read_committed) into {@code seen} by messageId, each as {@code
     * decision}, {@code configVersion} and {@code segment}, until {@code until} is there.
     */
    static void read(
            String bootstrap, String name, Map<String, JsonNode> seen, String until, Duration wait)
            throws Exception {
        Properties p = JobOutputs.readCommittedConsumer(bootstrap);
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            c.subscribe(List.of(name + "-deliveries", name + "-audit"));
            long deadline = System.nanoTime() + wait.toNanos();
            while (!seen.containsKey(until) && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    JsonNode v = Json.MAPPER.readTree(r.value());
                    var out = Json.MAPPER.createObjectNode();
                    if (r.topic().endsWith("-deliveries")) {
                        out.put("decision", JobOutputs.header(r, "freqcap-decision"));
                        out.put(
                                "configVersion",
                                Long.parseLong(JobOutputs.header(r, "freqcap-config-version")));
                        out.put("segment", JobOutputs.header(r, "freqcap-segment"));
                    } else {
                        out.put("decision", v.get("decision").asText());
                        out.put("configVersion", v.get("configVersion").asLong());
                        out.put("segment", v.get("segment").asText());
                    }
                    seen.put(v.get("messageId").asText(), out);
                }
            }
        }
        assertTrue(seen.containsKey(until), until + " decided");
    }
}
