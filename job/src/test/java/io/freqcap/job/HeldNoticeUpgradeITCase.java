package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.testutils.CappingRest;
import io.freqcap.job.testutils.FailOnce;
import io.freqcap.job.testutils.FailingOnceJob;
import io.freqcap.job.testutils.HeldSavepointWriter;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.LimitConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * An upgrade that adds {@code --held-topic} (contract.md §12): the committed savepoint of freqcap
 * 0.4 ({@link HeldSavepointWriter}) holds 300 messages whose send time is in 2030. Restored with
 * the option, the job writes a notice for every one of them, once, before it decides anything, and
 * nothing else: no delivery comes before its time.
 */
class HeldNoticeUpgradeITCase {
    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 2);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    @Test
    @Timeout(180)
    void aSavepointOfRelease04RestoredWithTheHeldTopicNoticesEveryHeldMessage() throws Exception {
        Path savepoint =
                Path.of("src", "test", "resources", "savepoints", "freqcap-0.4-held-ahead")
                        .toAbsolutePath();
        assertTrue(Files.exists(savepoint.resolve("_metadata")), "committed savepoint");
        JsonNode meta = Json.MAPPER.readTree(savepoint.resolve("held.json").toFile());
        String held = HeldSavepointWriter.NAME + "-held";
        Configuration options = HeldSavepointWriter.options(kafka, tmp, "--held-topic", held);
        kafka.createCompactedTopics(4, List.of(held));
        StreamExecutionEnvironment env =
                KafkaPipelineSupport.testEnv(options, tmp, savepoint.toUri().toString());
        KafkaSettings k = KafkaSettings.of(options);
        FailOnce.reset();
        FailingOnceJob.failingOnceJob(
                env,
                options,
                Integer.MAX_VALUE,
                JobSettings.from(options, LimitConfig.parse(meta.get("limits").asText()), null)
                        .capping()
                        .withHeldTopic(new KafkaHeldTopic(k)),
                null);
        JobClient job = env.executeAsync("freqcap-held-upgrade");
        try {
            long deadline = System.currentTimeMillis() + 60_000;
            List<String[]> records = records(held);
            while (records.size() < 300 && System.currentTimeMillis() < deadline) {
                Thread.sleep(250);
                records = records(held);
            }
            while (FailOnce.CHECKPOINTS.get() < 2 && System.currentTimeMillis() < deadline) {
                Thread.sleep(100); // and nothing more after two more checkpoints
            }
            records = records(held);
            assertEquals(300, records.size(), "one notice per held message, nothing else");
            Map<String, JsonNode> live = new TreeMap<>();
            for (String[] r : records) {
                live.put(r[0], Json.MAPPER.readTree(r[1]));
            }
            assertEquals(300, live.size());
            for (int u = 0; u < HeldSavepointWriter.USERS; u++) {
                for (int n = 0; n < 3; n++) {
                    String id = "m-" + u + "-" + n;
                    JsonNode notice = live.get(u + "/" + id);
                    assertEquals(id, notice.get("messageId").asText(), id);
                    assertEquals(u, notice.get("userId").asLong());
                    assertEquals(meta.get("end").asLong(), notice.get("sendAt").asLong());
                    assertEquals(
                            meta.get("t0").asLong() + n * 60_000L,
                            notice.get("timestamp").asLong());
                    assertEquals("*", notice.get("segment").asText());
                    assertEquals("push", notice.get("channel").asText());
                    assertEquals("marketing", notice.get("category").asText());
                    assertEquals(0, notice.get("priority").asInt());
                    assertEquals(1, notice.get("configVersion").asLong());
                    // 0.4 kept neither what held it nor its zone: the config's zone, no reasons.
                    assertEquals("UTC", notice.get("timezone").asText());
                    assertEquals(0, notice.get("heldBy").size());
                    assertTrue(!notice.has("campaignId"));
                }
            }
            // The heldDue gauges count them too, though 0.4 kept no counts per hour: 300 due in
            // 24 hours or more, 0 in the next hour.
            assertEquals(300L, heldDue(job, "24+"));
            assertEquals(0L, heldDue(job, "01"));
            // freqcap-query --held reads the same: one user's queue, then a summary.
            var text = new java.io.ByteArrayOutputStream();
            String[] user5 = {
                "--held",
                "--bootstrap-servers",
                kafka.bootstrapServers(),
                "--held-topic",
                held,
                "--user",
                "5"
            };
            assertEquals(
                    0,
                    io.freqcap.job.tools.query.HeldQuery.run(
                            user5, new java.io.PrintStream(text, true), System.err));
            String shown = text.toString(StandardCharsets.UTF_8);
            assertTrue(shown.startsWith("user 5: 3 messages waiting (" + held + ")"), shown);
            assertTrue(shown.contains("2030-06-01 00:30 +00:00 UTC  m-5-0  push/marketing"), shown);
            assertTrue(shown.indexOf("m-5-0") < shown.indexOf("m-5-2"), shown);
            text.reset();
            String[] summary = {
                "--held",
                "--bootstrap-servers",
                kafka.bootstrapServers(),
                "--held-topic",
                held,
                "--json"
            };
            io.freqcap.job.tools.query.HeldQuery.run(
                    summary, new java.io.PrintStream(text, true), System.err);
            assertEquals(
                    Json.MAPPER.readTree(
                            "{\"waiting\":300,\"byCampaign\":{\"(none)\":300},\"byHour\":"
                                    + "{\"2030-06-01 00:00Z\":300},\"earliest\":"
                                    + meta.get("end").asLong()
                                    + ",\"latest\":"
                                    + meta.get("end").asLong()
                                    + "}"),
                    Json.MAPPER.readTree(text.toByteArray()));
            assertEquals(
                    0,
                    JobOutputs.readAll(
                                    kafka.bootstrapServers(),
                                    HeldSavepointWriter.NAME + "-deliveries")
                            .size(),
                    "nothing delivered before 2030");
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }

    /** A heldDue gauge summed over the capping tasks, read from the MiniCluster's REST API. */
    private static long heldDue(JobClient job, String hoursAhead) throws Exception {
        String metrics = CappingRest.metrics(FLINK, job);
        long deadline = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < deadline) {
            for (JsonNode m : CappingRest.get(metrics)) {
                String id = m.path("id").asText();
                if (id.endsWith(".hoursAhead." + hoursAhead + ".heldDue")) {
                    JsonNode sum =
                            CappingRest.get(
                                    metrics
                                            + "?agg=sum&get="
                                            + java.net.URLEncoder.encode(
                                                    id, StandardCharsets.UTF_8));
                    return sum.get(0).path("sum").asLong();
                }
            }
            Thread.sleep(500);
        }
        throw new AssertionError("no heldDue gauge for " + hoursAhead);
    }

    private static List<String[]> records(String topic) {
        return JobOutputs.readAll(kafka.bootstrapServers(), topic).stream()
                .map(
                        r ->
                                new String[] {
                                    new String(r.key(), StandardCharsets.UTF_8),
                                    r.value() == null
                                            ? null
                                            : new String(r.value(), StandardCharsets.UTF_8)
                                })
                .toList();
    }
}
