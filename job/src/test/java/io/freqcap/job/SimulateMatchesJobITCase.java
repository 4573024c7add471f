package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.testutils.CappingRest;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.JobOutputs.Output;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import io.freqcap.job.tools.simulate.SimulateAccess;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.segment.SegmentBitmap;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code freqcap-simulate} decides as the job does: the same records go through the job (Kafka in
 * and out, parallelism 2) and through simulate, read from the job's input topic and from a JSONL
 * file, and every decision line must equal the job's output for that record: the delivery's
 * headers, or the audit record itself.
 */
class SimulateMatchesJobITCase {
    static final int PARTITIONS = 3;

    /**
     * Calendar limits in users' zones, scopes, a segment rule, shadow rules, holds and quiet hours,
     * a reserved place, distinct campaigns, lifetime limits (one with a reserved place) and caps
     * lowered by fatigue, in the rule and the shadow rule (without receipts: two topics have no
     * common order; the traffic is old: held messages are delivered at once, with their send times;
     * no rule preempts, since a job replaying old traffic finds every send time past where
     * simulate's clock does not: PreemptionITCase compares the two on live traffic).
     */
    static final String CONFIG =
            "{\"version\":3,\"timezone\":\"Asia/Singapore\",\"rules\":["
                    + "{\"segment\":\"vip\",\"limits\":[{\"window\":\"1d\",\"max\":4,"
                    + "\"reserve\":{\"slots\":1,\"priority\":70}}],"
                    + "\"campaign\":[{\"lifetime\":true,\"max\":3,"
                    + "\"reserve\":{\"slots\":1,\"priority\":70}}],"
                    + "\"channels\":{\"email\":[{\"calendar\":\"day\",\"max\":1}]},"
                    + "\"quietHours\":{\"from\":\"23:00\",\"to\":\"06:30\"}},"
                    + "{\"segment\":\"*\",\"limits\":[{\"calendar\":\"day\",\"max\":2},"
                    + "{\"window\":\"7d\",\"max\":6}],"
                    + "\"categories\":{\"promo\":[{\"calendar\":\"week\",\"max\":2}]},"
                    + "\"campaign\":[{\"lifetime\":true,\"max\":2},{\"window\":\"3d\",\"max\":1}],"
                    + "\"campaigns\":[{\"calendar\":\"week\",\"max\":3}],\"hold\":\"12h\","
                    + "\"quietHours\":{\"from\":\"21:00\",\"to\":\"08:00\","
                    + "\"channels\":[\"push\"]},"
                    + "\"fatigue\":{\"after\":4,\"scale\":0.5,\"floor\":1,\"window\":\"14d\"}}],"
                    + "\"shadow\":{\"rules\":[{\"segment\":\"vip\",\"limits\":"
                    + "[{\"window\":\"1d\",\"max\":2}],\"hold\":\"6h\"},"
                    + "{\"segment\":\"*\",\"limits\":"
                    + "[{\"calendar\":\"day\",\"max\":2}],"
                    + "\"campaign\":[{\"lifetime\":true,\"max\":1}],"
                    + "\"fatigue\":{\"after\":2,\"scale\":0.5,\"floor\":0,\"window\":\"3d\"}}]},"
                    + "\"exempt\":[\"transactional\"]}";

    static final String[] ZONES = {null, "Asia/Kolkata", "America/New_York", "Australia/Lord_Howe"};

    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 4);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    static boolean isVip(long user) {
        return user % 4 == 0;
    }

    @Test
    @Timeout(300)
    void simulateDecidesEveryRecordAsTheJobDid() throws Exception {
        String name = "simulate";
        SegmentBitmap.Builder vip = new SegmentBitmap.Builder();
        for (long u = 0; u < 400; u++) {
            if (isVip(u)) {
                vip.add(u);
            }
        }
        Path segments =
                Files.writeString(
                        tmp.resolve("segments.json"),
                        "[{\"segmentId\":\"vip\",\"version\":1,\"priority\":10,"
                                + "\"format\":\"roaring32\",\"bitmap\":\""
                                + Base64.getEncoder()
                                        .encodeToString(
                                                vip.build().write(SegmentBitmap.Format.ROARING32))
                                + "\"}]");
        Path limits = Files.writeString(tmp.resolve("limits.json"), CONFIG);
        Configuration options =
                KafkaPipelineSupport.jobOptions(
                        kafka, tmp, name, CONFIG, PARTITIONS, "--segments", segments.toString());
        List<Input> inputs = new ArrayList<>();
        for (Input in : Traffic.traffic(9, 8_000, 400, 20)) {
            Long user = Traffic.userOf(in);
            String zone = user == null ? null : ZONES[(int) (user % ZONES.length)];
            if (user == null) {
                inputs.add(in);
                continue;
            }
            // One message in five important enough for the reserved place.
            String json =
                    new String(in.value, StandardCharsets.UTF_8)
                            .replaceFirst(
                                    "\"timestamp\":",
                                    (zone == null ? "" : "\"timezone\":\"" + zone + "\",")
                                            + (in.seq % 5 == 0 ? "\"priority\":80," : "")
                                            + "\"timestamp\":");
            inputs.add(new Input(in.seq, in.key, json.getBytes(StandardCharsets.UTF_8)));
        }

        StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp);
        FreqcapMain.wireKafka(
                env,
                JobSettings.from(
                        options, LimitConfig.parse(CONFIG), JobSettings.readSegments(options)));
        JobClient job = env.executeAsync("freqcap-simulate-it");
        Map<Integer, Output> outputs;
        try {
            Traffic.produce(kafka.bootstrapServers(), name + "-in", PARTITIONS, inputs);
            var out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(), name, inputs.size(), Duration.ofSeconds(180));
            // the job's own check: one output per input, each the decision core's
            outputs =
                    JobOutputs.checkOutputs(
                            inputs,
                            out.get(name + "-deliveries"),
                            out.get(name + "-audit"),
                            Map.of(3L, LimitConfig.parse(CONFIG)),
                            (user, version) -> isVip(user) ? "vip" : "*");
            // The reserved place and the distinct campaigns were in play.
            long reserved = 0;
            long campaigns = 0;
            long fatigue = 0;
            long lifetime = 0;
            for (Output o : outputs.values()) {
                String audit = o.audit() == null ? "" : o.audit().toString();
                reserved += audit.contains("\"reserved\":1") ? 1 : 0;
                campaigns += audit.contains("\"scope\":\"campaigns\"") ? 1 : 0;
                fatigue += audit.contains("\"fatigue\":{\"unengaged\":") ? 1 : 0;
                lifetime += audit.contains("\"lifetime\":true") ? 1 : 0;
            }
            assertTrue(
                    reserved > 20 && campaigns > 20 && fatigue > 20 && lifetime > 20,
                    reserved
                            + " reserved, "
                            + campaigns
                            + " campaigns, "
                            + fatigue
                            + " fatigue, "
                            + lifetime
                            + " lifetime");
            // freqcap-export: both topics as one JSONL file, a line per output
            Path export = tmp.resolve("export.jsonl");
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            assertEquals(
                    0,
                    SimulateAccess.export(
                            new String[] {
                                "--bootstrap-servers",
                                kafka.bootstrapServers(),
                                "--delivery-topic",
                                name + "-deliveries",
                                "--audit-topic",
                                name + "-audit",
                                "--output",
                                export.toString()
                            },
                            new PrintStream(
                                    new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                            new PrintStream(err, true, StandardCharsets.UTF_8)),
                    err.toString(StandardCharsets.UTF_8));
            List<String> exported = Files.readAllLines(export);
            assertEquals(inputs.size(), exported.size(), "one exported line per output");
            long allowed =
                    outputs.values().stream().filter(o -> o.decision().equals("ALLOWED")).count();
            long exportedAllowed = 0;
            for (String line : exported) {
                JsonNode n = Json.MAPPER.readTree(line);
                if (n.get("decision").asText().equals("ALLOWED")) {
                    exportedAllowed++;
                    assertTrue(n.get("timestamp").asLong() > 0 && n.hasNonNull("channel"), line);
                }
            }
            assertEquals(allowed, exportedAllowed);
        } finally {
            KafkaPipelineSupport.cancel(job);
        }

        // 1. simulate reading the job's input topic: every line equals the job's output
        List<Input> ordered = Traffic.inPartitionOrder(inputs);
        Path fromTopic = tmp.resolve("from-topic.jsonl");
        simulateFromTopic(name, limits, fromTopic, "--segments", segments.toString());
        int[] kinds = compare(ordered, outputs, fromTopic, true);
        assertTrue(
                kinds[0] > 1000 && kinds[1] > 500,
                "allowed " + kinds[0] + ", rejected " + kinds[1]);
        assertTrue(kinds[2] > 20, kinds[2] + " with shadow decisions REJECTED when allowed");
        assertTrue(kinds[3] > 200, kinds[3] + " held");

        // 2. simulate reading the same values from a file (no keys, no tombstones)
        Path file = tmp.resolve("messages.jsonl");
        StringBuilder text = new StringBuilder();
        for (Input in : ordered) {
            text.append(in.value == null ? "" : new String(in.value, StandardCharsets.UTF_8))
                    .append('\n');
        }
        Files.writeString(file, text);
        Path fromFile = tmp.resolve("from-file.jsonl");
        SimulateAccess.simulate(
                "--input", file.toString(),
                "--limits", limits.toString(),
                "--segments", segments.toString(),
                "--output", fromFile.toString());
        compare(ordered, outputs, fromFile, false);
    }

    /**
     * Runs simulate on the input topic of the job named {@code name} under {@code limits}, its
     * lines into {@code output}, with {@code extra} options.
     */
    static void simulateFromTopic(String name, Path limits, Path output, String... extra) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--bootstrap-servers", kafka.bootstrapServers(),
                                "--input-topic", name + "-in",
                                "--limits", limits.toString(),
                                "--output", output.toString()));
        args.addAll(List.of(extra));
        SimulateAccess.simulate(args.toArray(new String[0]));
    }

    /**
     * With receipts too (contract.md §8 {@code --receipts}): the two topics have no common order,
     * so the traffic comes in two halves with the receipts between them, stamped after the first
     * half and before the second. The job decides the first half, applies every receipt (its
     * capping tasks' receipt counters say so), then decides the second; simulate applies a receipt
     * before the first message stamped after it. One input partition, so that simulate reads the
     * messages in the order the job did.
     */
    @Test
    @Timeout(300)
    void simulateWithReceiptsDecidesAsTheJobDid() throws Exception {
        String name = "simreceipts";
        Path limits = Files.writeString(tmp.resolve("limits-r.json"), CONFIG);
        Configuration options =
                KafkaPipelineSupport.jobOptions(
                        kafka, tmp, name, CONFIG, 1, "--receipts-topic", name + "-receipts");
        kafka.createTopics(1, List.of(name + "-receipts"));
        long half = Traffic.START + 10 * 86_400_000L;
        List<Input> first = new ArrayList<>();
        List<Input> second = new ArrayList<>();
        for (Input in : Traffic.traffic(58, 6_000, 300, 20)) {
            Long user = Traffic.userOf(in);
            long t = user == null ? 0 : Json.MAPPER.readTree(in.value).path("timestamp").asLong(0);
            if (user == null || t < half) {
                first.add(in);
            } else if (t >= half + 3_600_000L) {
                second.add(in);
            }
        }
        StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, tmp);
        FreqcapMain.wireKafka(env, JobSettings.from(options, LimitConfig.parse(CONFIG), null));
        JobClient job = env.executeAsync("freqcap-simulate-receipts-it");
        List<String> receipts = new ArrayList<>();
        Map<Integer, Output> outputs;
        try {
            Traffic.produce(kafka.bootstrapServers(), name + "-in", 1, first);
            var out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(), name, first.size(), Duration.ofSeconds(180));
            Map<Integer, Output> firstOut =
                    JobOutputs.outputsBySeq(
                            first, out.get(name + "-deliveries"), out.get(name + "-audit"));
            // A failed receipt for every third message sent, an open for every fifth user.
            long at = half + 1_000;
            java.util.Set<Long> opened = new java.util.HashSet<>();
            for (Input in : first) {
                Output o = firstOut.get(in.seq);
                if (!"ALLOWED".equals(o.decision())) {
                    continue;
                }
                JsonNode m = Json.MAPPER.readTree(in.value);
                long user = m.get("userId").asLong();
                // Only for a message sent before the receipt: replaying old traffic, the job
                // has sent every held message at once, where simulate (like a live job) holds
                // one until its send time.
                if (in.seq % 3 == 0 && (o.sendAt() == null || o.sendAt() < half)) {
                    receipts.add(
                            String.format(
                                    "{\"messageId\":%s,\"userId\":%d,\"status\":\"failed\","
                                            + "\"timestamp\":%d}",
                                    m.get("messageId"), user, at++));
                }
                if (user % 5 == 0 && opened.add(user)) {
                    receipts.add(
                            String.format(
                                    "{\"messageId\":%s,\"userId\":%d,\"status\":\"opened\","
                                            + "\"timestamp\":%d}",
                                    m.get("messageId"), user, at++));
                }
            }
            try (var producer =
                    new org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]>(
                            Traffic.producerProps(kafka.bootstrapServers()))) {
                for (String r : receipts) {
                    producer.send(
                            new org.apache.kafka.clients.producer.ProducerRecord<>(
                                    name + "-receipts", null, r.getBytes(StandardCharsets.UTF_8)));
                }
            }
            long applied = 0;
            long deadline = System.currentTimeMillis() + 120_000;
            while (applied < receipts.size() && System.currentTimeMillis() < deadline) {
                Thread.sleep(1000);
                applied =
                        CappingRest.sum(
                                FLINK, job, "receiptsApplied", "receiptsIgnored", "engagements");
            }
            assertEquals(receipts.size(), applied, "every receipt applied before the second half");
            Traffic.produce(kafka.bootstrapServers(), name + "-in", 1, second);
            List<Input> all = new ArrayList<>(first);
            all.addAll(second);
            out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(), name, all.size(), Duration.ofSeconds(180));
            outputs =
                    JobOutputs.outputsBySeq(
                            all, out.get(name + "-deliveries"), out.get(name + "-audit"));
            long uncounted = CappingRest.sum(FLINK, job, "receiptsApplied");
            assertTrue(uncounted > 100, uncounted + " un-counted");
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
        Path receiptsFile = Files.write(tmp.resolve("receipts.jsonl"), receipts);
        List<Input> ordered = new ArrayList<>(first);
        ordered.addAll(second);
        Path lines = tmp.resolve("with-receipts.jsonl");
        simulateFromTopic(name, limits, lines, "--receipts", receiptsFile.toString());
        int[] kinds = compare(Traffic.inPartitionOrder(ordered), outputs, lines, true);
        assertTrue(
                kinds[0] > 500 && kinds[1] > 200, "allowed " + kinds[0] + ", rejected " + kinds[1]);
    }

    /**
     * @param exactMalformed whether MALFORMED lines must equal the job's audit record (their source
     *     and a tombstone's error differ when read from a file)
     * @return ALLOWED lines, REJECTED lines, ALLOWED lines whose shadow decision is REJECTED, held
     *     ALLOWED lines
     */
    static int[] compare(
            List<Input> ordered, Map<Integer, Output> outputs, Path lines, boolean exactMalformed)
            throws Exception {
        List<String> decided = Files.readAllLines(lines);
        assertEquals(ordered.size(), decided.size(), "one line per input record");
        int[] kinds = new int[4];
        for (int i = 0; i < ordered.size(); i++) {
            Output job = outputs.get(ordered.get(i).seq);
            JsonNode line = Json.MAPPER.readTree(decided.get(i));
            String where = "record " + ordered.get(i).seq + " (" + lines.getFileName() + ")";
            assertEquals(job.decision(), line.get("decision").asText(), where);
            if (job.audit() == null) {
                assertEquals(job.segment(), line.get("segment").asText(), where);
                assertEquals(job.configVersion(), line.get("configVersion").asLong(), where);
                assertEquals(job.shadow(), line.path("shadow").asText(null), where);
                assertEquals(
                        job.sendAt(),
                        line.hasNonNull("sendAt") ? line.get("sendAt").asLong() : null,
                        where);
                kinds[3] += job.sendAt() != null ? 1 : 0;
                JsonNode value = Json.MAPPER.readTree(ordered.get(i).value);
                assertEquals(value.get("messageId"), line.get("messageId"), where);
                assertEquals(value.get("userId"), line.get("userId"), where);
                kinds[0] += job.decision().equals("ALLOWED") ? 1 : 0;
                kinds[2] += "REJECTED".equals(job.shadow()) ? 1 : 0;
            } else if (exactMalformed || !job.decision().equals("MALFORMED")) {
                assertEquals(job.audit(), line, where);
                kinds[1] += job.decision().equals("REJECTED") ? 1 : 0;
            }
        }
        return kinds;
    }
}
