package io.freqcap.job.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.FreqcapOptions;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.apache.flink.api.common.JobStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The local runner's embedded stack starts, moves messages, serves the web UI and stops cleanly.
 */
public class LocalRunnerITCase {

    public static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @org.junit.jupiter.api.io.TempDir java.nio.file.Path stateDir;

    @Test
    @Timeout(300)
    void embeddedStackMovesMessagesAndStopsCleanly() throws Exception {
        int port = freePort();
        int metricsPort = freePort();
        List<String> tempBefore = runnerTempDirs();
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
        CountDownLatch neverStop = new CountDownLatch(1);
        CompletableFuture<RunSummary> run =
                CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                return LocalRunner.run(
                                        new String[] {
                                            "--duration",
                                            "20s",
                                            "--rate",
                                            "500",
                                            "--users",
                                            "2000",
                                            "--web-port",
                                            String.valueOf(port),
                                            "--prometheus-port",
                                            String.valueOf(metricsPort),
                                            "--state-dir",
                                            stateDir.toString()
                                        },
                                        out,
                                        neverStop);
                            } catch (Exception e) {
                                throw new RuntimeException(e);
                            }
                        });

        // While it runs, the web UI's REST API lists the running job. A loaded machine may take a
        // while to start the broker, Redis and Flink: the wait is bounded by time, not by tries.
        HttpClient http = HttpClient.newHttpClient();
        String jobs = "";
        long startBy = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(150);
        while (!jobs.contains("RUNNING") && !run.isDone() && System.nanoTime() < startBy) {
            Thread.sleep(500);
            try {
                jobs = get(http, "http://localhost:" + port + "/jobs/overview");
            } catch (java.io.IOException notUpYet) {
                // the UI starts with the job (a request unanswered for 10 s is tried again)
            }
        }
        String lastSeen = jobs;
        assertTrue(
                jobs.contains("freqcap (local)") && jobs.contains("RUNNING"),
                () -> notRunning(run, lastSeen, printed));
        // The broker runs in a JVM of its own, a child of this one (seen through /proc: Linux).
        boolean proc = java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/self"));
        List<ProcessHandle> brokers = brokerProcesses();
        assertEquals(proc ? 1 : 0, brokers.size(), "one kafka.Kafka child process");
        // The job's metrics, for Prometheus (its operators' once its tasks run).
        String metrics = "";
        for (int i = 0; i < 60 && !metrics.contains("flink_taskmanager_job_task_operator_"); i++) {
            metrics = get(http, "http://127.0.0.1:" + metricsPort + "/metrics");
            Thread.sleep(500);
        }
        assertTrue(metrics.contains("flink_taskmanager_job_task_operator_"), metrics);
        // Everything it started (Flink's REST, blob and data servers, Prometheus metrics, the
        // broker, Redis) listens on loopback only: docs/operations.md, what listens where.
        if (ListeningSockets.available()) {
            var listening = ListeningSockets.ofTree(ProcessHandle.current());
            List<String> exposed =
                    listening.values().stream()
                            .flatMap(List::stream)
                            .filter(a -> !a.getAddress().isLoopbackAddress())
                            .map(Object::toString)
                            .toList();
            assertEquals(List.of(), exposed, "listening beyond loopback: " + listening);
            assertTrue(
                    listening.values().stream()
                            .flatMap(List::stream)
                            .anyMatch(a -> a.getPort() == metricsPort),
                    "the metrics port seen: " + listening);
        }

        RunSummary summary = run.get();
        String text = printed.toString(StandardCharsets.UTF_8);
        assertEquals(JobStatus.CANCELED, summary.finalStatus(), text);
        assertTrue(summary.sent() > 5_000, text);
        long decided = summary.decisions().values().stream().mapToLong(Long::longValue).sum();
        assertTrue(decided > summary.sent() / 2, "decisions read back: " + summary + "\n" + text);
        assertTrue(decided <= summary.sent(), "never more outputs than inputs: " + summary);
        // Every message sent is accounted for: decided, or still waiting on the held topic (the
        // runner lets its last checkpoint commit before it stops the job).
        assertTrue(summary.waiting() > 0, "the sample config holds messages: " + summary);
        assertEquals(summary.sent(), decided + summary.waiting(), text);
        assertTrue(text.contains("still waiting for their send time"), text);
        assertTrue(summary.decisions().getOrDefault("ALLOWED", 0L) > 0, summary.toString());
        // Stopping the runner stopped the broker's JVM too.
        for (ProcessHandle broker : brokers) {
            broker.onExit().get(30, java.util.concurrent.TimeUnit.SECONDS);
        }
        assertEquals(List.of(), brokerProcesses(), "no broker left running");
        // Nor temporary files; broker data, checkpoints and Redis' are in the state dir.
        // (the runner may also have deleted directories killed runs left: fewer is fine)
        List<String> left = new java.util.ArrayList<>(runnerTempDirs());
        left.removeAll(tempBefore);
        assertEquals(List.of(), left, "temporary directories left behind");
        assertTrue(
                java.nio.file.Files.isDirectory(stateDir.resolve("checkpoints"))
                        && java.nio.file.Files.isDirectory(stateDir.resolve("kafka"))
                        && java.nio.file.Files.isDirectory(stateDir.resolve("redis")),
                "state kept for the next start");
        assertTrue(text.contains("Flink web UI: http://localhost:" + port), text);
        assertTrue(text.contains("| allowed "), "progress lines: " + text);
        // The sample config holds push messages through quiet hours: with users in five zones,
        // some are always in them.
        assertTrue(
                java.util.regex.Pattern.compile(
                                "\\| held [1-9][0-9,]* \\(waiting [0-9,]+\\) \\| released [0-9,]+"
                                        + " \\| preempted [0-9,]+ \\|")
                        .matcher(text)
                        .find(),
                "held, released and preempted in the progress lines: " + text);
        // The generator's users opt out, pause and set limits, and its sender reports bounces:
        // the job applies them (preferences) and frees the bounced messages' places.
        assertTrue(
                java.util.regex.Pattern.compile(
                                "\\| preferences [1-9][0-9,]* \\| un-counted [1-9][0-9,]* \\|")
                        .matcher(text)
                        .find(),
                "preferences and un-counted in the progress lines: " + text);
        // Half its users never open what they get: under the sample config's fatigue (segment
        // active, after two sends with no open, half the cap) some are decided under a lowered
        // cap, and the opens of the others are applied.
        assertTrue(
                java.util.regex.Pattern.compile(
                                "\\| opens [1-9][0-9,]* \\| under a lowered cap [1-9][0-9,]* \\|"
                                        + " lifetime-rejected [1-9][0-9,]* \\|")
                        .matcher(text)
                        .find(),
                "opens, messages under a lowered cap and messages a lifetime limit rejected in the"
                        + " progress lines: "
                        + text);
        assertTrue(text.contains("Summary: sent"), text);
        assertTrue(
                summary.segments().getOrDefault("new", 0L) > 0,
                "sample segments in force: " + summary);
        assertTrue(summary.segments().getOrDefault("active", 0L) > 0, summary.toString());
        // The embedded Redis holds the mirror: a user key (and channel keys) per counted user.
        assertTrue(summary.redisKeys() > 100, "Redis mirror keys: " + summary);
        assertTrue(text.contains("Redis mirror: redis://127.0.0.1:"), text);
    }

    /** A page's body; a request unanswered for 10 s fails (HttpTimeoutException). */
    private static String get(HttpClient http, String url)
            throws java.io.IOException, InterruptedException {
        HttpRequest request =
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(java.time.Duration.ofSeconds(10))
                        .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString()).body();
    }

    /**
     * Why the job was not seen running: the web UI's last answer, how the run ended if it did, and
     * what it printed.
     */
    private static String notRunning(
            CompletableFuture<RunSummary> run, String lastSeen, ByteArrayOutputStream printed) {
        String outcome;
        if (!run.isDone()) {
            outcome = "the run had not ended (waited up to 150 s)";
        } else {
            try {
                outcome = "the run ended: " + run.join();
            } catch (RuntimeException e) {
                StringBuilder causes = new StringBuilder("the run failed:");
                Throwable t =
                        e instanceof java.util.concurrent.CompletionException ? e.getCause() : e;
                for (int depth = 0; t != null && depth < 20; t = t.getCause(), depth++) {
                    causes.append("\n  ").append(t);
                    StackTraceElement[] frames = t.getStackTrace();
                    for (int i = 0; i < Math.min(3, frames.length); i++) {
                        causes.append("\n    at ").append(frames[i]);
                    }
                }
                outcome = causes.toString();
            }
        }
        return "the web UI never listed the job as RUNNING; last /jobs/overview: \""
                + lastSeen
                + "\"; "
                + outcome
                + "\nprinted:\n"
                + printed.toString(StandardCharsets.UTF_8);
    }

    private static List<String> runnerTempDirs() throws java.io.IOException {
        try (var all =
                java.nio.file.Files.list(
                        java.nio.file.Path.of(System.getProperty("java.io.tmpdir")))) {
            return all.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith("freqcap-local"))
                    .sorted()
                    .toList();
        }
    }

    private static List<ProcessHandle> brokerProcesses() {
        return ProcessHandle.current()
                .children()
                .filter(ProcessHandle::isAlive)
                .filter(p -> commandLine(p).contains("\0kafka.Kafka\0"))
                .toList();
    }

    /** /proc's copy: ProcessHandle.Info truncates long command lines (the class path). */
    private static String commandLine(ProcessHandle p) {
        try {
            return new String(
                    java.nio.file.Files.readAllBytes(
                            java.nio.file.Path.of("/proc", String.valueOf(p.pid()), "cmdline")),
                    StandardCharsets.UTF_8);
        } catch (java.io.IOException gone) {
            return "";
        }
    }

    @Test
    @Timeout(120)
    void withNoJobItRunsKafkaRedisAndTrafficForAJobElsewhere() throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
        int port = freePort();
        RunSummary summary =
                LocalRunner.run(
                        new String[] {
                            "--no-job",
                            "--duration",
                            "6s",
                            "--rate",
                            "500",
                            "--users",
                            "200",
                            "--web-port",
                            String.valueOf(port),
                            "--state-dir",
                            stateDir.resolve("no-job").toString()
                        },
                        out,
                        new CountDownLatch(1));
        String text = printed.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("no job (--no-job). Kafka: localhost:"), text);
        assertTrue(text.contains("Redis mirror: redis://127.0.0.1:"), text);
        assertTrue(summary.sent() > 1_000, summary.toString());
        assertEquals(
                0L,
                summary.decisions().values().stream().mapToLong(Long::longValue).sum(),
                "nothing decides without a job: " + summary);
        assertTrue(!text.contains("Flink web UI"), "no embedded Flink: " + text);
        assertEquals(List.of(), brokerProcesses(), "no broker left running");
    }

    @Test
    void badOptionsFailWithOneClearLine() {
        var e =
                org.junit.jupiter.api.Assertions.assertThrows(
                        FreqcapOptions.InvalidOptionException.class,
                        () ->
                                LocalRunner.run(
                                        new String[] {"--guarantee", "maybe-once"},
                                        System.out,
                                        null));
        assertEquals(
                "--guarantee: invalid value \"maybe-once\" (exactly-once or at-least-once)",
                e.getMessage());
    }
}
