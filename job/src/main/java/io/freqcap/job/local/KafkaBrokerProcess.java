package io.freqcap.job.local;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Uuid;

/**
 * A real single-node Kafka broker (KRaft, combined broker and controller) in a JVM of its own,
 * started from the broker classes already on this JVM's class path ({@code kafka_2.13}, the version
 * of kafka-clients): no download, no Docker. The local runner and the end-to-end benchmark use it,
 * so the broker's threads, heap and JIT do not share a JVM with Flink; tests use the quicker in-JVM
 * {@link EmbeddedKafka}.
 *
 * <p>The broker listens on {@code localhost:9092} when that port is free, else on a free port. Its
 * log goes to {@code broker.log} in its directory; a broker that does not come up within a minute
 * stops the start with the end of that log. {@link #close()} stops it (SIGTERM, then SIGKILL after
 * 15 s); a shutdown hook does the same if this JVM ends first.
 */
public final class KafkaBrokerProcess implements LocalKafka {
    private static final Duration READY_TIMEOUT = Duration.ofMinutes(1);

    private Process process;
    private final Path log;
    private final String bootstrap;
    private final Thread hook;
    private final String heap;
    private final Path log4j;
    private final Path config;
    private final Path dir;

    private KafkaBrokerProcess(
            Process process,
            Path log,
            String bootstrap,
            String heap,
            Path log4j,
            Path config,
            Path dir) {
        this.process = process;
        this.log = log;
        this.bootstrap = bootstrap;
        this.heap = heap;
        this.log4j = log4j;
        this.config = config;
        this.dir = dir;
        this.hook = new Thread(() -> this.process.destroyForcibly(), "kafka-broker-stop");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Stops the broker at once (SIGKILL), as a crash would; {@link #restart} brings it back. */
    public synchronized void kill() throws InterruptedException {
        process.destroyForcibly().waitFor();
    }

    /** Starts the broker again on the same port and data, and waits until it answers. */
    public synchronized void restart() throws Exception {
        if (process.isAlive()) {
            throw new IllegalStateException("the broker is running");
        }
        process =
                java(
                        heap,
                        log4j,
                        List.of("kafka.Kafka", config.toString()),
                        dir.resolve("out.log"));
        awaitReady();
    }

    /** Freezes the broker (SIGSTOP): connections stay open, nothing is answered. */
    public void pause() throws Exception {
        signal("-STOP");
    }

    /** Lets a paused broker go on (SIGCONT). */
    public void resume() throws Exception {
        signal("-CONT");
    }

    private void signal(String signal) throws Exception {
        Signals.send(process, signal);
    }

    /**
     * Formats {@code dir} as the broker's storage, unless an earlier run did, and starts the
     * broker. {@code heap} is its -Xmx (e.g. "1g").
     */
    public static KafkaBrokerProcess start(Path dir, String heap) throws Exception {
        return start(dir, heap, Map.of());
    }

    /**
     * The same, with broker settings of {@code overrides} in place of the defaults (tests: a
     * proxy's address advertised, a quick transaction timeout check). Clients connect to the first
     * of its {@code listeners}.
     */
    public static KafkaBrokerProcess start(Path dir, String heap, Map<String, String> overrides)
            throws Exception {
        Files.createDirectories(dir);
        int port = portOr(9092);
        int controllerPort = portOr(0);
        Map<String, String> props = new TreeMap<>(LocalKafka.singleNodeSettings());
        props.put("process.roles", "broker,controller");
        props.put("node.id", "1");
        props.put("controller.quorum.voters", "1@localhost:" + controllerPort);
        props.put(
                "listeners",
                "PLAINTEXT://localhost:" + port + ",CONTROLLER://localhost:" + controllerPort);
        props.put("advertised.listeners", "PLAINTEXT://localhost:" + port);
        props.put("controller.listener.names", "CONTROLLER");
        props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        props.put("inter.broker.listener.name", "PLAINTEXT");
        props.put("log.dirs", dir.resolve("data").toString());
        props.put("num.partitions", "1");
        props.putAll(overrides);
        Path config = writeConfig(dir, props, "WARN");
        Path log4j = dir.resolve("log4j2.properties");
        Path log = dir.resolve("broker.log");

        // Storage formatted by an earlier run (the local runner's --state-dir) is kept as it is.
        boolean formattedBefore = Files.exists(dir.resolve("data").resolve("meta.properties"));
        int formatted =
                formattedBefore
                        ? 0
                        : java(
                                        heap,
                                        log4j,
                                        List.of(
                                                "kafka.tools.StorageTool",
                                                "format",
                                                "-t",
                                                Uuid.randomUuid().toString(),
                                                "-c",
                                                config.toString()),
                                        dir.resolve("format.log"))
                                .waitFor();
        if (formatted != 0) {
            throw new IOException(
                    "Kafka storage format failed (exit "
                            + formatted
                            + "): "
                            + tail(dir.resolve("format.log")));
        }
        Process process =
                java(
                        heap,
                        log4j,
                        List.of("kafka.Kafka", config.toString()),
                        dir.resolve("out.log"));
        KafkaBrokerProcess broker =
                new KafkaBrokerProcess(
                        process,
                        log,
                        clientAddress(props.get("listeners")),
                        heap,
                        log4j,
                        config,
                        dir);
        try {
            broker.awaitReady();
        } catch (Exception e) {
            broker.close();
            throw e;
        }
        return broker;
    }

    /** The first listener's host and port: the clients' (PLAINTEXT://localhost:9092,...). */
    private static String clientAddress(String listeners) {
        String first = listeners.split(",")[0];
        return first.substring(first.indexOf("://") + 3);
    }

    /**
     * Writes a broker's {@code server.properties} and a {@code log4j2.properties} that logs to
     * {@code broker.log} at {@code level}, both in {@code dir}; also for tests that start a broker
     * configured otherwise (security, listeners).
     *
     * @return the path of {@code server.properties}
     */
    public static Path writeConfig(Path dir, Map<String, String> props, String level)
            throws IOException {
        StringBuilder text = new StringBuilder();
        new TreeMap<>(props).forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
        Path config = Files.writeString(dir.resolve("server.properties"), text);
        Files.writeString(
                dir.resolve("log4j2.properties"),
                "rootLogger.level = "
                        + level
                        + "\n"
                        + "rootLogger.appenderRef.file.ref = file\n"
                        + "appender.file.name = file\n"
                        + "appender.file.type = File\n"
                        + "appender.file.fileName = "
                        + dir.resolve("broker.log")
                        + "\n"
                        + "appender.file.layout.type = PatternLayout\n"
                        + "appender.file.layout.pattern = %d %-5p %c{1} %m%n\n");
        return config;
    }

    /**
     * Runs a Kafka main class ({@code kafka.Kafka}, {@code kafka.tools.StorageTool}) in a JVM of
     * its own on this JVM's class path, its output to {@code out}.
     */
    public static Process java(String heap, Path log4j, List<String> mainAndArgs, Path out)
            throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx" + heap);
        cmd.add("-XX:+UseG1GC");
        cmd.add("-Dlog4j2.configurationFile=" + log4j);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.addAll(mainAndArgs);
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
    }

    private void awaitReady() throws Exception {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        Exception last = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException(
                        "the Kafka broker exited (code " + process.exitValue() + "): " + tail(log));
            }
            try (Admin admin = admin()) {
                if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
                    return;
                }
            } catch (Exception e) {
                last = e;
            }
            Thread.sleep(200);
        }
        throw new IOException(
                "the Kafka broker was not ready within "
                        + READY_TIMEOUT.toSeconds()
                        + " s ("
                        + last
                        + "): "
                        + tail(log));
    }

    /** The port if it is free on loopback, else a free one (0 = any free port). */
    private static int portOr(int wanted) throws IOException {
        if (wanted != 0) {
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress("localhost", wanted));
                return wanted;
            } catch (IOException taken) {
                // fall through to a free port
            }
        }
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static String tail(Path file) {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
        } catch (IOException e) {
            return "(no log at " + file + ")";
        }
    }

    @Override
    public String bootstrapServers() {
        return bootstrap;
    }

    /** The broker's process id, e.g. to measure its CPU time. */
    public long pid() {
        return process.pid();
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
    }
}
