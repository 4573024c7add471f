package io.freqcap.job.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.bench.SimulateBenchmark;
import io.freqcap.job.local.TempDirs;
import io.freqcap.job.tools.segments.SegmentsTool;
import io.freqcap.job.tools.simulate.SimulateAccess;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.segment.SegmentBitmap;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The notebooks in {@code notebooks/} run headless ({@code jupyter nbconvert --execute}) on data
 * this test makes with the project's own tools: {@code freqcap-simulate} over seeded traffic (one
 * config, and four candidates for limit tuning) and {@code freqcap-segments inspect} on three
 * segments. A failing cell fails the test, and each notebook must write its plots (under {@code
 * target/notebooks}). Without Jupyter (Debian: jupyter-nbconvert python3-ipykernel python3-pandas
 * python3-matplotlib, which {@code .ci/run} installs) it is skipped, unless the environment has
 * {@code FREQCAP_NOTEBOOKS=required} (as {@code .ci/run} sets).
 */
class NotebooksITCase {
    static final Path NOTEBOOKS = Path.of("..", "notebooks").toAbsolutePath().normalize();
    static final Path OUT = Path.of("target", "notebooks").toAbsolutePath();
    static final Path DATA = OUT.resolve("data");

    /** After three sends with no open, half the caps (never below one). */
    static final String FATIGUE =
            "\"fatigue\":{\"after\":3,\"scale\":0.5,\"floor\":1,\"window\":\"14d\"}";

    static final String CONFIG =
            "{\"version\":3,\"timezone\":\"Europe/Berlin\",\"rules\":["
                    + "{\"segment\":\"vip\",\"limits\":[{\"window\":\"1d\",\"max\":3}]},"
                    + "{\"segment\":\"*\",\"limits\":[{\"calendar\":\"day\",\"max\":1},"
                    + "{\"window\":\"7d\",\"max\":4}],"
                    + "\"channels\":{\"email\":[{\"window\":\"2d\",\"max\":1}]},"
                    + "\"categories\":{\"promo\":[{\"calendar\":\"week\",\"max\":1}]},"
                    + "\"campaign\":[{\"lifetime\":true,\"max\":1},{\"window\":\"3d\",\"max\":1}],"
                    + "\"hold\":\"1d\","
                    + "\"quietHours\":{\"from\":\"21:00\",\"to\":\"08:00\","
                    + "\"channels\":[\"push\"]},\"preempt\":true,"
                    + FATIGUE
                    + "}],\"exempt\":[\"transactional\"]}";

    static final Map<String, String> CANDIDATES =
            Map.of(
                    "a-1-per-day", rolling(1, 1, 3),
                    "b-2-per-day", rolling(2, 2, 6),
                    "c-3-per-day", rolling(3, 3, 10),
                    "d-4-per-day", rolling(4, 4, 20));

    static String rolling(int version, int perDay, int perWeek) {
        return "{\"version\":"
                + version
                + ",\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":"
                + perDay
                + "},{\"window\":\"7d\",\"max\":"
                + perWeek
                + "}]}],\"exempt\":[\"transactional\"]}";
    }

    static String jupyter;

    @BeforeAll
    static void findJupyter() throws Exception {
        for (String candidate : List.of("/usr/bin/jupyter", "jupyter")) {
            try {
                Process p =
                        new ProcessBuilder(candidate, "nbconvert", "--version")
                                .redirectErrorStream(true)
                                .start();
                if (p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    jupyter = candidate;
                    break;
                }
            } catch (java.io.IOException notThere) {
                // next
            }
        }
        String why =
                "jupyter nbconvert not found: install jupyter-nbconvert python3-ipykernel"
                        + " python3-pandas python3-matplotlib (.ci/run does)";
        if (jupyter == null && "required".equals(System.getenv("FREQCAP_NOTEBOOKS"))) {
            throw new AssertionError(why);
        }
        Assumptions.assumeTrue(jupyter != null, why);
    }

    static void makeData() throws Exception {
        TempDirs.deleteRecursively(OUT);
        Files.createDirectories(DATA.resolve("tuning"));
        Files.createDirectories(DATA.resolve("segments"));
        Path messages = DATA.resolve("messages.jsonl");
        SimulateBenchmark.write(messages, 30_000, 2_000);
        // One message in five an alert of priority 80, which may take a held one's place.
        List<String> lines = new java.util.ArrayList<>(Files.readAllLines(messages));
        for (int i = 0; i < lines.size(); i += 5) {
            lines.set(i, "{\"priority\":80," + lines.get(i).substring(1));
        }
        Files.write(messages, lines);
        SegmentBitmap.Builder vip = new SegmentBitmap.Builder();
        for (long u = 0; u < 2_000; u += 5) {
            vip.add(u);
        }
        Path segments =
                Files.writeString(
                        DATA.resolve("segments.json"),
                        "[{\"segmentId\":\"vip\",\"version\":1,\"priority\":1,"
                                + "\"format\":\"roaring32\",\"bitmap\":\""
                                + Base64.getEncoder()
                                        .encodeToString(
                                                vip.build().write(SegmentBitmap.Format.ROARING32))
                                + "\"}]");
        Random rnd = new Random(5);
        // One user in seven has a say: no email, or at most one message in any 2 days.
        List<String> preferences = new java.util.ArrayList<>();
        for (long u = 0; u < 2_000; u += 7) {
            preferences.add(
                    u % 2 == 0
                            ? "{\"userId\":"
                                    + u
                                    + ",\"version\":1,\"optOut\":{\"channels\":[\"email\"]}}"
                            : "{\"userId\":"
                                    + u
                                    + ",\"version\":1,\"limits\":[{\"window\":\"2d\",\"max\":1}]}");
        }
        // Users of three habits: a quarter open 80% of what they get, a quarter 30%, half never,
        // ten minutes after each message's timestamp.
        List<String> receipts = new java.util.ArrayList<>();
        for (String line : lines) {
            JsonNode m = Json.MAPPER.readTree(line);
            long user = m.get("userId").asLong();
            int opens = user % 4 == 0 ? 80 : user % 4 == 1 ? 30 : 0;
            if (rnd.nextInt(100) < opens) {
                receipts.add(
                        "{\"messageId\":\""
                                + m.get("messageId").asText()
                                + "\",\"userId\":"
                                + user
                                + ",\"status\":\"opened\",\"timestamp\":"
                                + (m.get("timestamp").asLong() + 600_000)
                                + "}");
            }
        }
        Path receiptsFile = Files.write(DATA.resolve("receipts.jsonl"), receipts);
        Path prefsFile = Files.write(DATA.resolve("preferences.jsonl"), preferences);
        Path limits = Files.writeString(DATA.resolve("limits.json"), CONFIG);
        SimulateAccess.simulate(
                "--input", messages.toString(),
                "--limits", limits.toString(),
                "--segments", segments.toString(),
                "--preferences", prefsFile.toString(),
                "--receipts", receiptsFile.toString(),
                "--output", DATA.resolve("decisions.jsonl").toString());
        // What the fatigue changes: the same config without it, compared.
        Path fatigue = Files.createDirectories(DATA.resolve("fatigue"));
        SimulateAccess.simulate(
                "--input", messages.toString(),
                "--limits",
                        Files.writeString(
                                        fatigue.resolve("without.json"),
                                        CONFIG.replace("," + FATIGUE, "")
                                                .replace("\"version\":3", "\"version\":2"))
                                .toString(),
                "--compare", limits.toString(),
                "--segments", segments.toString(),
                "--preferences", prefsFile.toString(),
                "--receipts", receiptsFile.toString(),
                "--output", fatigue.resolve("without.jsonl").toString(),
                "--compare-output", fatigue.resolve("with.jsonl").toString(),
                "--summary", fatigue.resolve("summary.json").toString());
        for (Map.Entry<String, String> c : CANDIDATES.entrySet()) {
            Path tuning = DATA.resolve("tuning");
            SimulateAccess.simulate(
                    "--input", messages.toString(),
                    "--limits",
                            Files.writeString(tuning.resolve(c.getKey() + ".json"), c.getValue())
                                    .toString(),
                    "--output", tuning.resolve(c.getKey() + ".jsonl").toString(),
                    "--summary", tuning.resolve(c.getKey() + ".summary.json").toString());
        }
        SegmentBitmap.Builder dense = new SegmentBitmap.Builder();
        SegmentBitmap.Builder sparse = new SegmentBitmap.Builder();
        SegmentBitmap.Builder wide = new SegmentBitmap.Builder();
        for (int i = 0; i < 1_000_000; i++) {
            if (rnd.nextInt(10) != 0) {
                dense.add(i);
            }
        }
        for (int i = 0; i < 100_000; i++) {
            sparse.add(rnd.nextInt(Integer.MAX_VALUE));
            wide.add((1L << 40) + rnd.nextInt(50_000_000));
        }
        inspect("dense-90-percent", dense.build());
        inspect("sparse-random", sparse.build());
        inspect("above-2-to-the-32", wide.build());
    }

    static void inspect(String name, SegmentBitmap b) throws Exception {
        Path file = DATA.resolve("segments").resolve(name + ".roaring");
        Files.write(
                file,
                b.write(
                        b.fitsRoaring32()
                                ? SegmentBitmap.Format.ROARING32
                                : SegmentBitmap.Format.ROARING64));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertEquals(
                0,
                SegmentsTool.run(
                        new String[] {"inspect", file.toString()},
                        new PrintStream(out, true, StandardCharsets.UTF_8)));
        Files.writeString(
                DATA.resolve("segments").resolve(name + ".txt"),
                out.toString(StandardCharsets.UTF_8));
        Files.delete(file);
    }

    static void execute(String notebook) throws Exception {
        ProcessBuilder pb =
                new ProcessBuilder(
                                jupyter,
                                "nbconvert",
                                "--to",
                                "notebook",
                                "--execute",
                                "--ExecutePreprocessor.timeout=300",
                                "--output-dir",
                                OUT.toString(),
                                NOTEBOOKS.resolve(notebook + ".ipynb").toString())
                        .redirectErrorStream(true)
                        .redirectOutput(OUT.resolve(notebook + ".log").toFile());
        // Debian's python (with pandas) first, whatever else is on the PATH
        pb.environment().put("PATH", "/usr/bin" + File.pathSeparator + System.getenv("PATH"));
        pb.environment().put("MPLBACKEND", "Agg");
        pb.environment().put("FREQCAP_DATA", DATA.toString());
        pb.environment().put("FREQCAP_OUT", OUT.toString());
        Process p = pb.start();
        assertTrue(p.waitFor(600, TimeUnit.SECONDS), notebook + " ran over 10 minutes");
        assertEquals(
                0,
                p.exitValue(),
                notebook + " failed:\n" + Files.readString(OUT.resolve(notebook + ".log")));
    }

    static void assertPlots(String... names) throws Exception {
        for (String name : names) {
            Path png = OUT.resolve(name);
            assertTrue(Files.exists(png) && Files.size(png) > 5_000, name + " written");
        }
    }

    @Test
    @Timeout(900)
    void theNotebooksRunOnDataFromTheToolsAndWriteTheirPlots() throws Exception {
        makeData();
        execute("capping-report");
        assertPlots(
                "capping-report-decisions.png",
                "capping-report-rejection-rates.png",
                "capping-report-per-user-day.png",
                "capping-report-retry-after.png",
                "capping-report-held.png",
                "capping-report-held-by-campaign.png",
                "capping-report-preemption.png",
                "capping-report-preferences.png",
                "capping-report-lifetime.png",
                "capping-report-fatigue-caps.png",
                "capping-report-fatigue-compare.png");
        execute("limit-tuning");
        assertPlots("limit-tuning-frontier.png");
        JsonNode tuned = Json.MAPPER.readTree(OUT.resolve("limit-tuning.ipynb").toFile());
        assertTrue(tuned.toString().contains("pick: "), "the notebook picks a candidate");
        execute("segments");
        assertPlots("segments-bits-per-member.png");
    }

    @Test
    void notebooksAreCommittedWithoutOutputs() throws Exception {
        try (var files = Files.list(NOTEBOOKS)) {
            for (Path nb : files.filter(f -> f.toString().endsWith(".ipynb")).toList()) {
                for (JsonNode cell : Json.MAPPER.readTree(nb.toFile()).get("cells")) {
                    if (cell.get("cell_type").asText().equals("code")) {
                        assertEquals(0, cell.get("outputs").size(), nb + ": outputs in git");
                        assertTrue(cell.get("execution_count").isNull(), nb + ": execution count");
                    }
                }
            }
        }
    }
}
