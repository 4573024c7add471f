package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.local.EmbeddedRedis;
import io.freqcap.job.local.LocalJob;
import io.freqcap.job.local.LocalRunnerITCase;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.segment.SegmentBitmap;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The job's metrics as Prometheus scrapes them: the job runs with Flink's Prometheus reporter on a
 * free port (deploy/config.yaml's settings), decides a known input with one record of every kind,
 * and {@code /metrics} must show every contract §9 metric with the value that input gives; every
 * query of the Grafana dashboard and every alert rule must name metrics that exist there.
 */
class PrometheusMetricsITCase {
    static final int PARTITIONS = 2;
    static final int PORT = port();
    static final Path REPO = Path.of("..").toAbsolutePath().normalize();

    /** vip users: 2 a day; everyone else 1; shadow rules: 1 a day for everyone. */
    static final String CONFIG =
            "{\"version\":1,\"rules\":["
                    + "{\"segment\":\"vip\",\"limits\":[{\"window\":\"1d\",\"max\":2}]},"
                    + "{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":1}]}],"
                    + "\"exempt\":[\"transactional\"],"
                    + "\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"1d\",\"max\":1}]}]}}";

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir static Path tmp;

    static EmbeddedRedis redis;
    static JobClient job;
    static Scrape scrape;

    static int port() {
        try {
            return LocalRunnerITCase.freePort();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @BeforeAll
    @Timeout(240)
    static void decideAKnownInput() throws Exception {
        String name = "prom";
        redis = EmbeddedRedis.start(tmp.resolve("redis"), false);
        Path segments =
                Files.writeString(
                        tmp.resolve("segments.json"),
                        "[{\"segmentId\":\"vip\",\"version\":1,\"priority\":1,"
                                + "\"format\":\"roaring32\",\"bitmap\":\""
                                + Base64.getEncoder()
                                        .encodeToString(
                                                SegmentBitmap.of(0)
                                                        .write(SegmentBitmap.Format.ROARING32))
                                + "\"}]");
        Configuration options =
                jobOptions(
                        name,
                        "--segments",
                        segments.toString(),
                        "--redis",
                        redis.uri(),
                        "--redis-key-prefix",
                        name);
        // A local cluster of its own, as the local runner has, with the reporter on.
        Configuration flink = FreqcapMain.flinkConfig(options);
        flink.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        flink.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                tmp.resolve("checkpoints").toUri().toString());
        LocalJob.prometheus(flink, Integer.toString(PORT));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(flink);
        FreqcapMain.wireKafka(
                env,
                JobSettings.from(
                        options, LimitConfig.parse(CONFIG), JobSettings.readSegments(options)));
        job = env.executeAsync("freqcap-prometheus-it");

        long base = System.currentTimeMillis() - 600_000;
        long min = 60_000;
        List<Input> inputs = new ArrayList<>();
        inputs.add(Traffic.pushMessage(0, 0, "m1", base)); // vip: ALLOWED
        inputs.add(Traffic.pushMessage(1, 0, "m2", base + min)); // ALLOWED, shadow no
        inputs.add(Traffic.pushMessage(2, 0, "m3", base + 2 * min)); // REJECTED
        inputs.add(Traffic.pushMessage(3, 1, "m4", base)); // ALLOWED
        inputs.add(Traffic.pushMessage(4, 1, "m5", base + min)); // REJECTED
        inputs.add(Traffic.pushMessage(5, 1, "m4", base + 2 * min)); // DUPLICATE
        inputs.add(Traffic.pushMessage(6, 1, "m6", base - 2 * 86_400_000L)); // STALE
        inputs.add(
                new Input(
                        7,
                        "2".getBytes(StandardCharsets.UTF_8),
                        ("{\"messageId\":\"t1\",\"userId\":2,\"channel\":\"push\",\"category\":"
                                        + "\"transactional\",\"timestamp\":"
                                        + base
                                        + ",\"seq\":7}")
                                .getBytes(StandardCharsets.UTF_8))); // EXEMPT
        inputs.add(new Input(8, null, "not json".getBytes(StandardCharsets.UTF_8))); // MALFORMED
        Traffic.produce(kafka.bootstrapServers(), name + "-in", PARTITIONS, inputs);
        Traffic.send(kafka.bootstrapServers(), name + "-config", "{\"version\":5,\"rules\":[]}");
        JobOutputs.readOutputs(
                kafka.bootstrapServers(), name, inputs.size() + 1, Duration.ofSeconds(120));

        // Counters are read live; the mirror's acknowledgements and a checkpoint may trail.
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        do {
            scrape = Scrape.of(get("http://localhost:" + PORT + "/metrics"));
            Thread.sleep(500);
        } while (System.nanoTime() < deadline
                && (scrape.sumOrZero(OP + "redisWrites") < 2
                        || scrape.sumOrZero("flink_jobmanager_job_numberOfCompletedCheckpoints")
                                < 1));
        Files.writeString(
                Path.of("target", "prometheus-metrics.txt"), String.join("\n", scrape.names()));
    }

    @AfterAll
    static void stop() throws Exception {
        if (job != null) {
            KafkaPipelineSupport.cancel(job);
        }
        if (redis != null) {
            redis.close();
        }
    }

    static String get(String url) throws Exception {
        HttpResponse<String> r =
                HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(URI.create(url)).build(),
                                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), url);
        return r.body();
    }

    static final String OP = "flink_taskmanager_job_task_operator_";

    /** Options of a job of this test named {@code name}: its topics made, its config written. */
    static Configuration jobOptions(String name, String... extra) throws Exception {
        return KafkaPipelineSupport.jobOptions(kafka, tmp, name, CONFIG, PARTITIONS, extra);
    }

    @Test
    void everyContractMetricShowsTheValueOfTheKnownInput() {
        Map<String, Double> counters = new LinkedHashMap<>();
        counters.put("allowed", 3.0);
        counters.put("exempt", 1.0);
        counters.put("rejected", 2.0);
        counters.put("duplicate", 1.0);
        counters.put("stale", 1.0);
        counters.put("malformed", 1.0);
        counters.put("invalidControl", 1.0);
        counters.put("shadowRejected", 3.0);
        counters.put("redisErrors", 0.0);
        counters.put("redisDropped", 0.0);
        counters.put("redisBacklog", 0.0);
        counters.put("held", 0.0); // the config holds nothing
        counters.put("released", 0.0);
        counters.put("forgotten", 0.0);
        counters.put("cancelled", 0.0);
        counters.put("preempted", 0.0); // nothing held, nothing to take
        counters.put("heldNotices", 0.0); // no --held-topic
        counters.forEach((metric, value) -> assertEquals(value, scrape.sum(OP + metric), metric));
        // gauges: each capping task holds the config and the segment
        assertEquals(
                java.util.Collections.nCopies(PARTITIONS, 0.0),
                scrape.values(OP + "heldNow", l -> true),
                "heldNow of each capping task");
        for (String gauge : List.of("configVersion", "segments")) {
            List<Double> values = scrape.values(OP + gauge, l -> true);
            assertEquals(PARTITIONS, values.size(), gauge + " of each capping task");
            values.forEach(v -> assertEquals(1.0, v, gauge));
        }
        scrape.values(OP + "segmentBytes", l -> true).forEach(v -> assertTrue(v > 0));
        // what waits by hour of send time: 00..23 and 24+, none waiting here
        List<Double> due = scrape.values(OP + "hoursAhead_heldDue", l -> true);
        assertEquals(25 * PARTITIONS, due.size(), "heldDue gauges");
        due.forEach(v -> assertEquals(0.0, v, "heldDue"));
        assertEquals(
                PARTITIONS,
                scrape.values(OP + "hoursAhead_heldDue", l -> "24+".equals(l.get("hoursAhead")))
                        .size());
        assertTrue(scrape.sum(OP + "redisWriteMillis_count") >= 1, "redisWriteMillis");
        // Users 0 and 1 were counted: one key each. Every decided message of theirs marks its
        // user (3 and 4 of them), and the marks between two flushes make one write: 2 to 7.
        double keysWritten = scrape.sum(OP + "redisWrites");
        assertTrue(keysWritten >= 2.0 && keysWritten <= 7.0, "redisWrites " + keysWritten);
        // A log of one or two entries: {"v": 2, "log": [[13 digits, "push", "m1"]]} and more.
        List<Double> logBytes = scrape.values(OP + "redisLogBytes", l -> true);
        assertEquals(PARTITIONS, logBytes.size(), "redisLogBytes of each task");
        assertTrue(
                logBytes.stream().anyMatch(b -> b >= 45 && b <= 90), "redisLogBytes " + logBytes);
        // beyond the contract: per segment, and how far behind decisions run
        assertEquals(2.0, scrape.sum(OP + "segment_allowed", l -> "vip".equals(l.get("segment"))));
        assertEquals(1.0, scrape.sum(OP + "segment_rejected", l -> "vip".equals(l.get("segment"))));
        assertEquals(1.0, scrape.sum(OP + "segment_allowed", l -> "*".equals(l.get("segment"))));
        assertEquals(
                7.0, scrape.sum(OP + "decisionLagMillis_count"), "all but stale and malformed");
        List<Double> p99 =
                scrape.values(OP + "decisionLagMillis", l -> "0.99".equals(l.get("quantile")));
        assertFalse(p99.isEmpty());
        double maxP99 = p99.stream().filter(v -> !v.isNaN()).mapToDouble(v -> v).max().orElse(0);
        assertTrue(maxP99 >= 480_000 && maxP99 < 3_600_000, "lag p99 " + maxP99);
    }

    /** Metric names in PromQL: identifiers starting with flink_ (functions and labels are not). */
    static Set<String> metricNames(String expr) {
        Set<String> out = new TreeSet<>();
        Matcher m = Pattern.compile("\\bflink_[A-Za-z0-9_]+").matcher(expr);
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    @Test
    void everyDashboardQueryNamesAMetricThatExists() throws Exception {
        JsonNode dashboard =
                Json.MAPPER.readTree(REPO.resolve("deploy/grafana/freqcap.json").toFile());
        List<String> exprs = new ArrayList<>();
        for (JsonNode panel : dashboard.get("panels")) {
            for (JsonNode target : panel.path("targets")) {
                exprs.add(target.get("expr").asText());
            }
        }
        assertTrue(exprs.size() >= 10, exprs.size() + " queries");
        for (String expr : exprs) {
            Set<String> names = metricNames(expr);
            assertFalse(names.isEmpty(), "no metric in " + expr);
            for (String metric : names) {
                assertTrue(scrape.names().contains(metric), metric + " (in " + expr + ")");
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyAlertNamesAMetricThatExists() throws Exception {
        Map<String, Object> rules;
        try (InputStream in = Files.newInputStream(REPO.resolve("deploy/prometheus/alerts.yml"))) {
            rules =
                    (Map<String, Object>)
                            new Load(LoadSettings.builder().build()).loadFromInputStream(in);
        }
        int alerts = 0;
        for (Object group : (List<Object>) rules.get("groups")) {
            for (Object rule : (List<Object>) ((Map<String, Object>) group).get("rules")) {
                Map<String, Object> r = (Map<String, Object>) rule;
                String expr = (String) r.get("expr");
                assertTrue(r.containsKey("alert") && r.containsKey("annotations"), r.toString());
                for (String metric : metricNames(expr)) {
                    assertTrue(scrape.names().contains(metric), metric + " (in " + expr + ")");
                }
                assertFalse(metricNames(expr).isEmpty(), "no metric in " + expr);
                alerts++;
            }
        }
        assertTrue(alerts >= 4, alerts + " alerts");
    }

    /** One scrape of Prometheus' text format. */
    record Scrape(Map<String, List<Map.Entry<Map<String, String>, Double>>> series) {
        static final Pattern LINE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{.*\\})? (.+)");
        static final Pattern LABEL =
                Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

        static Scrape of(String text) {
            Map<String, List<Map.Entry<Map<String, String>, Double>>> series =
                    new LinkedHashMap<>();
            for (String line : text.split("\n")) {
                if (line.startsWith("#") || line.isBlank()) {
                    continue;
                }
                Matcher m = LINE.matcher(line);
                if (!m.matches()) {
                    continue;
                }
                Map<String, String> labels = new LinkedHashMap<>();
                if (m.group(2) != null) {
                    Matcher l = LABEL.matcher(m.group(2));
                    while (l.find()) {
                        labels.put(l.group(1), l.group(2));
                    }
                }
                series.computeIfAbsent(m.group(1), k -> new ArrayList<>())
                        .add(Map.entry(labels, Double.parseDouble(m.group(3))));
            }
            return new Scrape(series);
        }

        Set<String> names() {
            return new TreeSet<>(series.keySet());
        }

        List<Double> values(String name, Predicate<Map<String, String>> labels) {
            List<Double> out = new ArrayList<>();
            for (Map.Entry<Map<String, String>, Double> e : series.getOrDefault(name, List.of())) {
                if (labels.test(e.getKey())) {
                    out.add(e.getValue());
                }
            }
            return out;
        }

        double sum(String name) {
            return sum(name, l -> true);
        }

        double sumOrZero(String name) {
            return series.containsKey(name) ? sum(name) : 0;
        }

        double sum(String name, Predicate<Map<String, String>> labels) {
            assertTrue(series.containsKey(name), name + " not scraped");
            return values(name, labels).stream().mapToDouble(Double::doubleValue).sum();
        }
    }
}
