package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.browser.HeadlessChromium;
import io.freqcap.job.local.LocalRunner;
import io.freqcap.job.local.LocalRunnerITCase;
import io.freqcap.job.local.RunSummary;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import io.freqcap.schema.common.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Flink web UI as a user sees it: the local runner decides a known input from a real broker,
 * headless Chromium opens the job in the web UI, goes to the capping operator's Metrics tab, adds
 * each decision counter of both subtasks through the "Add Metric" picker and shows them as numbers;
 * what the page shows must add up to the outputs read from Kafka. The page is saved as {@code
 * target/web-ui-capping-metrics.png}. Without Chromium (Debian: chromium, which {@code .ci/run}
 * installs) it is skipped, unless the environment has {@code FREQCAP_BROWSER=required}.
 */
class WebUiITCase {
    static final String[] COUNTERS = {"allowed", "exempt", "rejected", "duplicate", "stale"};

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    @Test
    @Timeout(300)
    void theCappingCountersInTheWebUiEqualTheOutputsInKafka() throws Exception {
        String chromium = HeadlessChromium.binary();
        String why = "chromium not found: install Debian's chromium (.ci/run does)";
        if (chromium == null && "required".equals(System.getenv("FREQCAP_BROWSER"))) {
            throw new AssertionError(why);
        }
        Assumptions.assumeTrue(chromium != null, why);

        String name = "webui";
        kafka.createTopics(2, List.of(name + "-in", name + "-deliveries", name + "-audit"));
        kafka.createTopics(1, List.of(name + "-config", name + "-segments"));
        Path limits = Files.writeString(tmp.resolve("limits.json"), Traffic.config(1, 2, 5, 1));
        int web = LocalRunnerITCase.freePort();
        CountDownLatch stop = new CountDownLatch(1);
        PrintStream quiet =
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        CompletableFuture<RunSummary> runner =
                CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                List<String> args =
                                        new ArrayList<>(
                                                KafkaPipelineSupport.args(kafka, name, limits));
                                args.addAll(
                                        List.of(
                                                "--web-port",
                                                Integer.toString(web),
                                                "--prometheus-port",
                                                "off",
                                                "--state-dir",
                                                tmp.resolve("state").toString()));
                                return LocalRunner.run(args.toArray(new String[0]), quiet, stop);
                            } catch (Exception e) {
                                throw new RuntimeException(e);
                            }
                        });
        try {
            List<Input> inputs = Traffic.traffic(21, 3_000, 300, 5);
            Traffic.produce(kafka.bootstrapServers(), name + "-in", 2, inputs);
            var out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(), name, inputs.size(), Duration.ofSeconds(120));
            Map<String, Long> inKafka = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> r : out.get(name + "-deliveries")) {
                inKafka.merge(
                        JobOutputs.header(r, "freqcap-decision").toLowerCase(), 1L, Long::sum);
            }
            for (ConsumerRecord<byte[], byte[]> r : out.get(name + "-audit")) {
                String d = Json.MAPPER.readTree(r.value()).get("decision").asText();
                inKafka.merge(d.toLowerCase(), 1L, Long::sum);
            }
            assertEquals(
                    inputs.size(),
                    inKafka.values().stream().mapToLong(Long::longValue).sum(),
                    "one output per input");

            String base = "http://localhost:" + web;
            JsonNode job = Json.MAPPER.readTree(get(base + "/jobs")).get("jobs").get(0);
            String jobId = job.get("id").asText();
            String vertex = null;
            for (JsonNode v : Json.MAPPER.readTree(get(base + "/jobs/" + jobId)).get("vertices")) {
                if (v.get("name").asText().startsWith("capping")) {
                    vertex = v.get("id").asText();
                }
            }
            Map<String, Long> shown;
            try (HeadlessChromium browser =
                    HeadlessChromium.start(chromium, tmp.resolve("chromium-profile"))) {
                browser.navigate(
                        base + "/#/job/running/" + jobId + "/overview/" + vertex + "/metrics");
                browser.await(
                        "!!document.querySelector('nz-select .ant-select-selector')",
                        Duration.ofSeconds(60));
                StringBuilder names = new StringBuilder();
                for (String counter : COUNTERS) {
                    for (int subtask = 0; subtask < 2; subtask++) {
                        names.append(names.length() == 0 ? "" : ",")
                                .append("'")
                                .append(subtask)
                                .append(".capping.")
                                .append(counter)
                                .append("'");
                    }
                }
                // pick each metric as a user does: open the picker, type its name, click it
                JsonNode missing =
                        browser.evaluate(
                                "(async () => {"
                                        + " const sleep = ms => new Promise(r => setTimeout(r, ms));"
                                        + " const missing = [];"
                                        + " for (const name of ["
                                        + names
                                        + "]) {"
                                        + "  document.querySelector('nz-select"
                                        + " .ant-select-selector').click();"
                                        + "  await sleep(400);"
                                        + "  const input = document.querySelector('nz-select input');"
                                        + "  input.value = name;"
                                        + "  input.dispatchEvent(new Event('input', {bubbles: true}));"
                                        + "  await sleep(600);"
                                        + "  const item = Array.from(document.querySelectorAll("
                                        + "'nz-option-item')).find(e => e.getAttribute('title') ==="
                                        + " name);"
                                        + "  if (item) { item.click(); } else { missing.push(name); }"
                                        + "  await sleep(300);"
                                        + " }"
                                        + " return missing.join(',');"
                                        + "})()");
                assertEquals("", missing.asText(), "metrics the picker did not offer");
                // show them as numbers, and read what the page says
                browser.evaluate(
                        "Array.from(document.querySelectorAll('button'))"
                                + ".filter(b => b.innerText.trim() === 'Numeric')"
                                + ".forEach(b => b.click())");
                shown = new HashMap<>();
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (System.nanoTime() < deadline) {
                    shown = parse(browser.evaluate("document.body.innerText").asText());
                    if (shown.equals(subset(inKafka))) {
                        break;
                    }
                    Thread.sleep(1_000);
                }
                browser.screenshot(Path.of("target", "web-ui-capping-metrics.png"));
            }
            assertEquals(subset(inKafka), shown, "counters the web UI shows, summed over subtasks");
            assertTrue(shown.get("allowed") > 500 && shown.get("rejected") > 100, shown.toString());
        } finally {
            stop.countDown();
            runner.get();
        }
    }

    static Map<String, Long> subset(Map<String, Long> decisions) {
        Map<String, Long> out = new HashMap<>();
        for (String c : COUNTERS) {
            out.put(c, decisions.getOrDefault(c, 0L));
        }
        return out;
    }

    /**
     * The Metrics tab's cards as text: a metric's name, its buttons, then its value once shown as a
     * number ("0.capping.allowed Big Small 1234 Chart Numeric"). Sums the subtasks per counter.
     */
    static Map<String, Long> parse(String page) {
        Map<String, Long> out = new HashMap<>();
        String[] lines = page.split("\n");
        for (int i = 0; i + 3 < lines.length; i++) {
            String line = lines[i].trim();
            if (line.matches("[01]\\.capping\\.[a-z]+")
                    && lines[i + 1].trim().equals("Big")
                    && lines[i + 2].trim().equals("Small")
                    && lines[i + 3].trim().matches("[0-9,]+")) {
                out.merge(
                        line.substring(line.lastIndexOf('.') + 1),
                        Long.parseLong(lines[i + 3].trim().replace(",", "")),
                        Long::sum);
            }
        }
        return out;
    }

    static String get(String url) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(url)).build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }
}
