package io.freqcap.job.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ConfigurationUtils;
import org.apache.flink.configuration.GlobalConfiguration;

/**
 * A Flink session cluster of separate JVMs on this machine, started from Flink's Maven jars (no
 * flink-dist, no Docker): one JobManager and any number of TaskManagers, configured from {@code
 * deploy/config.yaml} with what only this machine can know (loopback addresses, ports, memory,
 * checkpoint and savepoint directories under the cluster's directory). The web UI and REST API
 * listen on {@link #restUrl()}.
 *
 * <p>The cluster's directory holds {@code conf/} (the config.yaml and log4j settings the processes
 * read), {@code log/} (one log and one stdout file per process), {@code pids/} (so that another
 * JVM, such as the next {@code bin/freqcap-cluster stop}, can find them), {@code checkpoints/} and
 * {@code savepoints/}. Processes outlive the JVM that started them.
 *
 * <p>The cluster's class path is Flink's runtime without the job's own libraries (the Kafka
 * connector, lettuce, RoaringBitmap, freqcap's modules): a job runs from the shaded jar it was
 * submitted with, as on any real cluster.
 */
public final class StandaloneCluster {
    static final String JOB_MANAGER =
            "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint";
    static final String TASK_MANAGER = "org.apache.flink.runtime.taskexecutor.TaskManagerRunner";
    static final String TM_PARAMS = "org.apache.flink.runtime.util.bash.BashJavaUtils";

    /** What Flink's own distribution opens to its JVMs on Java 17 ({@code env.java.opts.all}). */
    static final List<String> MODULE_OPTIONS =
            List.of(
                    "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
                    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
                    "--add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED",
                    "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
                    "--add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED",
                    "--add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED",
                    "--add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED",
                    "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang=ALL-UNNAMED",
                    "--add-opens=java.base/java.net=ALL-UNNAMED",
                    "--add-opens=java.base/java.io=ALL-UNNAMED",
                    "--add-opens=java.base/java.nio=ALL-UNNAMED",
                    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
                    "--add-opens=java.base/java.text=ALL-UNNAMED",
                    "--add-opens=java.base/java.time=ALL-UNNAMED",
                    "--add-opens=java.base/java.util=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED");

    /**
     * Jars of the job, the local runner and the tests: in the cluster's class path they would hide
     * what the submitted jar lacks. (flink-connector-datagen stays: flink-dist holds it, and
     * flink-streaming-java's {@code fromData} needs it.)
     */
    private static final List<String> NOT_FLINK =
            List.of(
                    "freqcap-",
                    "flink-connector-kafka",
                    "flink-test-utils",
                    "kafka",
                    "lettuce-",
                    "RoaringBitmap-",
                    "netty-",
                    "reactor-",
                    "reactive-streams-",
                    "redis-",
                    "embedded-redis-",
                    "jedis-",
                    "junit-",
                    "opentest4j-",
                    "apiguardian-",
                    "archunit",
                    "scala-",
                    "argparse4j-",
                    "jopt-simple-",
                    "pcollections-");

    private final Path dir;
    private final List<Path> classpath;
    private final Configuration config;

    private StandaloneCluster(Path dir, List<Path> classpath, Configuration config) {
        this.dir = dir;
        this.classpath = classpath;
        this.config = config;
    }

    /**
     * How a cluster is laid out: where, how big, on which port.
     *
     * @param taskManagerMemory each TaskManager's process size, or null for the config's
     * @param webSubmit whether the REST API takes uploaded jars ({@code web.submit.enable})
     */
    public record Settings(
            Path dir,
            Path lib,
            Path baseConfig,
            int restPort,
            String taskManagerMemory,
            boolean webSubmit) {
        public Settings {
            if (restPort < 0 || restPort > 65535) {
                throw new IllegalArgumentException("rest port out of range: " + restPort);
            }
        }
    }

    /**
     * Writes the cluster's configuration into {@code settings.dir()} (a directory of a cluster
     * started before is reused, its checkpoints and savepoints kept) and returns the cluster, not
     * started.
     */
    public static StandaloneCluster prepare(Settings settings) throws IOException {
        Path dir = settings.dir().toAbsolutePath();
        for (String sub : List.of("conf", "log", "pids", "checkpoints", "savepoints", "tmp")) {
            Files.createDirectories(dir.resolve(sub));
        }
        Configuration c =
                GlobalConfiguration.loadConfiguration(
                        settings.baseConfig().toAbsolutePath().getParent().toString());
        c.setString("jobmanager.rpc.address", "localhost");
        c.setString("jobmanager.rpc.port", Integer.toString(freePort()));
        c.setString("jobmanager.bind-host", "localhost");
        c.setString("jobmanager.memory.process.size", "1g");
        c.setString("taskmanager.host", "localhost");
        c.setString("taskmanager.bind-host", "localhost");
        if (settings.taskManagerMemory() != null) {
            c.setString("taskmanager.memory.process.size", settings.taskManagerMemory());
        }
        c.setString("rest.address", "localhost");
        c.setString("rest.bind-address", "localhost");
        c.setString("rest.port", Integer.toString(settings.restPort()));
        // Uploaded jars run code on the cluster: only when asked (bin/freqcap-cluster submits
        // graphs through POST /jobs, which needs no upload).
        c.setString("web.submit.enable", Boolean.toString(settings.webSubmit()));
        c.setString("web.upload.dir", dir.resolve("tmp").toString());
        c.setString("io.tmp.dirs", dir.resolve("tmp").toString());
        c.setString("execution.checkpointing.dir", dir.resolve("checkpoints").toUri().toString());
        c.setString(
                "execution.checkpointing.savepoint-dir",
                dir.resolve("savepoints").toUri().toString());
        // A TaskManager killed on this machine is noticed from its closed connections; the
        // heartbeat is the backstop (50 s by default).
        c.setString("heartbeat.timeout", "20 s");
        Files.write(
                dir.resolve("conf").resolve(GlobalConfiguration.FLINK_CONF_FILENAME),
                ConfigurationUtils.convertConfigToWritableLines(c, false),
                StandardCharsets.UTF_8);
        Files.writeString(
                dir.resolve("conf").resolve("log4j.properties"),
                String.join(
                        "\n",
                        "rootLogger.level = INFO",
                        "rootLogger.appenderRef.file.ref = file",
                        "appender.file.name = file",
                        "appender.file.type = File",
                        "appender.file.fileName = ${sys:log.file}",
                        "appender.file.layout.type = PatternLayout",
                        "appender.file.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c{1} %m%n",
                        "logger.kafka.name = org.apache.kafka",
                        "logger.kafka.level = WARN",
                        ""));
        return new StandaloneCluster(dir, flinkClasspath(settings.lib()), c);
    }

    /** A cluster {@link #prepare}d before in {@code dir}, to start more of or stop. */
    public static StandaloneCluster open(Path dir, Path lib) throws IOException {
        Path conf = dir.toAbsolutePath().resolve("conf");
        if (!Files.exists(conf.resolve(GlobalConfiguration.FLINK_CONF_FILENAME))) {
            throw new IOException("no cluster in " + dir + ": start one first");
        }
        return new StandaloneCluster(
                dir.toAbsolutePath(),
                flinkClasspath(lib),
                GlobalConfiguration.loadConfiguration(conf.toString()));
    }

    /** The jars of {@code lib} a Flink cluster runs on: Flink and its dependencies only. */
    static List<Path> flinkClasspath(Path lib) throws IOException {
        if (!Files.isDirectory(lib)) {
            throw new IOException(
                    lib + " is not a directory of jars: build first (mvn -q -DskipTests package)");
        }
        try (Stream<Path> jars = Files.list(lib)) {
            List<Path> out =
                    jars.filter(p -> p.getFileName().toString().endsWith(".jar"))
                            .filter(
                                    p -> {
                                        String name = p.getFileName().toString();
                                        return NOT_FLINK.stream().noneMatch(name::startsWith)
                                                && !name.endsWith("-tests.jar");
                                    })
                            .sorted()
                            .toList();
            if (out.stream()
                    .noneMatch(p -> p.getFileName().toString().startsWith("flink-runtime-"))) {
                throw new IOException(lib + " holds no flink-runtime jar");
            }
            return out;
        }
    }

    public Path dir() {
        return dir;
    }

    public String restUrl() {
        return "http://localhost:" + config.getString("rest.port", "8081");
    }

    /** Starts the JobManager (web UI and REST included). */
    public Process startJobManager() throws IOException {
        List<String> cmd = java("jobmanager", "env.java.opts.jobmanager");
        cmd.add("-Xmx768m");
        cmd.add(JOB_MANAGER);
        cmd.add("--configDir");
        cmd.add(dir.resolve("conf").toString());
        return start("jobmanager", cmd);
    }

    /**
     * Starts one more TaskManager, named {@code taskmanager-N} with the next free N, its memory
     * worked out by Flink's own {@code BashJavaUtils} from the config, as Flink's scripts do.
     */
    public Process startTaskManager() throws IOException, InterruptedException {
        int n = 1;
        while (Files.exists(dir.resolve("pids").resolve("taskmanager-" + n + ".pid"))) {
            n++;
        }
        String name = "taskmanager-" + n;
        List<String> params = taskManagerParams();
        List<String> cmd = java(name, "env.java.opts.taskmanager");
        cmd.addAll(split(params.get(0)));
        cmd.add(TASK_MANAGER);
        cmd.add("--configDir");
        cmd.add(dir.resolve("conf").toString());
        cmd.addAll(split(params.get(1)));
        return start(name, cmd);
    }

    /** The JVM flags and the {@code -D} memory settings of a TaskManager. */
    private List<String> taskManagerParams() throws IOException, InterruptedException {
        List<String> cmd = java("bash-java-utils", null);
        cmd.add(TM_PARAMS);
        cmd.add("GET_TM_RESOURCE_PARAMS");
        cmd.add("--configDir");
        cmd.add(dir.resolve("conf").toString());
        Path out = dir.resolve("log").resolve("taskmanager-params.out");
        Process p =
                new ProcessBuilder(cmd)
                        .redirectErrorStream(true)
                        .redirectOutput(out.toFile())
                        .start();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException("TaskManager memory settings failed: " + Files.readString(out));
        }
        String prefix = "BASH_JAVA_UTILS_EXEC_RESULT:";
        List<String> result =
                Files.readAllLines(out).stream()
                        .filter(l -> l.startsWith(prefix))
                        .map(l -> l.substring(prefix.length()))
                        .toList();
        if (result.size() < 2) {
            throw new IOException("TaskManager memory settings missing: " + Files.readString(out));
        }
        return result;
    }

    private static List<String> split(String s) {
        return List.of(s.trim().split("\\s+"));
    }

    private List<String> java(String logName, String optionsKey) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(MODULE_OPTIONS);
        for (String key :
                Stream.of("env.java.opts.all", optionsKey).filter(k -> k != null).toList()) {
            String opts = config.getString(key, "");
            if (!opts.isBlank()) {
                cmd.addAll(split(opts));
            }
        }
        cmd.add("-Dlog.file=" + dir.resolve("log").resolve(logName + ".log"));
        cmd.add(
                "-Dlog4j.configurationFile="
                        + dir.resolve("conf").resolve("log4j.properties").toUri());
        cmd.add("-cp");
        cmd.add(
                String.join(
                        java.io.File.pathSeparator,
                        classpath.stream().map(Path::toString).toList()));
        return cmd;
    }

    private Process start(String name, List<String> cmd) throws IOException {
        Process p =
                new ProcessBuilder(cmd)
                        .redirectErrorStream(true)
                        .redirectOutput(dir.resolve("log").resolve(name + ".out").toFile())
                        .start();
        Files.writeString(dir.resolve("pids").resolve(name + ".pid"), Long.toString(p.pid()));
        return p;
    }

    /** The processes of this cluster that are running, by name, from their pid files. */
    public Map<String, ProcessHandle> running() throws IOException {
        Map<String, ProcessHandle> out = new java.util.TreeMap<>();
        try (Stream<Path> pids = Files.list(dir.resolve("pids"))) {
            for (Path f : pids.toList()) {
                String name = f.getFileName().toString().replace(".pid", "");
                Optional<ProcessHandle> h = handle(f);
                if (h.isPresent() && h.get().isAlive()) {
                    out.put(name, h.get());
                } else {
                    Files.deleteIfExists(f); // ended: its name is free again
                }
            }
        }
        return out;
    }

    private static Optional<ProcessHandle> handle(Path pidFile) {
        try {
            return ProcessHandle.of(Long.parseLong(Files.readString(pidFile).trim()))
                    // a recycled pid is most likely not a JVM (command lines are cut at 4 KB)
                    .filter(h -> h.info().command().map(c -> c.endsWith("java")).orElse(true));
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** Kills one process with SIGKILL ({@code kill -9}), as a machine failure would. */
    public void kill(String name) throws IOException, InterruptedException {
        Path f = dir.resolve("pids").resolve(name + ".pid");
        Optional<ProcessHandle> h = handle(f);
        if (h.isEmpty()) {
            throw new IOException("no process " + name + " in " + dir);
        }
        h.get().destroyForcibly();
        try {
            h.get().onExit().get(30, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException
                | java.util.concurrent.TimeoutException e) {
            throw new IOException(name + " did not end after SIGKILL", e);
        }
        Files.deleteIfExists(f);
    }

    /** Stops every process of the cluster: SIGTERM, then SIGKILL after 20 s. */
    public void stop() throws IOException {
        Map<String, ProcessHandle> all = running();
        all.values().forEach(ProcessHandle::destroy);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        for (ProcessHandle h : all.values()) {
            try {
                h.onExit().get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                h.destroyForcibly();
            }
        }
        try (Stream<Path> pids = Files.list(dir.resolve("pids"))) {
            for (Path f : pids.toList()) {
                Files.deleteIfExists(f);
            }
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("localhost", 0));
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
