package io.freqcap.job.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ConnectException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code bin/freqcap-cluster}: a Flink session cluster on this machine and freqcap on it.
 *
 * <pre>
 * freqcap-cluster [--dir D] start [--task-managers N] [--rest-port P] [--taskmanager-memory M]
 *                                  [--web-submit]
 * freqcap-cluster [--dir D] status | stop | add-taskmanager | kill NAME
 * freqcap-cluster [--dir D] submit JOB_OPTIONS...
 * freqcap-cluster [--dir D] savepoint JOB_ID | stop-with-savepoint JOB_ID
 * freqcap-cluster [--dir D] resume SAVEPOINT JOB_OPTIONS...
 * </pre>
 *
 * The script passes {@code --lib} (Flink's jars), {@code --config} (deploy/config.yaml) and {@code
 * --job-jar} (the shaded job jar), before the command. The job's options (its {@code --parallelism}
 * too, which rescales a resumed job) follow {@code submit} and {@code resume}, which build the
 * job's graph here and send it with the jar (as {@code flink run} does). The cluster's REST API
 * takes no uploaded jars unless started with {@code --web-submit} (for the web UI's "Submit New
 * Job" or deploy/submit-rest.sh): whoever reaches that port could otherwise run code there.
 */
public final class ClusterCommand {
    private ClusterCommand() {}

    static final Duration READY = Duration.ofSeconds(90);

    public static void main(String[] args) throws Exception {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        // The cluster's own options come before the command; what follows a submit is the job's.
        List<String> args = new ArrayList<>(List.of(argv));
        boolean help = false;
        int firstCommand = 0;
        while (firstCommand < args.size() && args.get(firstCommand).startsWith("--")) {
            if (args.get(firstCommand).equals("--help")) {
                args.remove(firstCommand);
                help = true;
                continue;
            }
            firstCommand += 2;
        }
        List<String> global = new ArrayList<>(args.subList(0, Math.min(firstCommand, args.size())));
        args = new ArrayList<>(args.subList(Math.min(firstCommand, args.size()), args.size()));
        Path dir = Path.of(take(global, "--dir", "freqcap-cluster"));
        Path lib = Path.of(take(global, "--lib", "job/target/freqcap-local/lib"));
        Path config = Path.of(take(global, "--config", "deploy/config.yaml"));
        String jobJar = take(global, "--job-jar", null);
        if (!global.isEmpty()) {
            err.println("unknown option " + global.get(0) + " (--help lists them)");
            return 2;
        }
        if (args.isEmpty() || help) {
            (help ? out : err)
                    .println(
                            "usage: freqcap-cluster start [--task-managers N] [--rest-port P]"
                                    + " [--taskmanager-memory M] [--web-submit] | status | stop | add-taskmanager | kill NAME"
                                    + " | submit JOB_OPTIONS... | savepoint JOB_ID"
                                    + " | stop-with-savepoint JOB_ID | resume SAVEPOINT JOB_OPTIONS...");
            return help ? 0 : 2;
        }
        String command = args.remove(0);
        switch (command) {
            case "start" -> {
                int tms = Integer.parseInt(take(args, "--task-managers", "2"));
                int port = Integer.parseInt(take(args, "--rest-port", "8081"));
                String memory = take(args, "--taskmanager-memory", null); // deploy's 4g
                boolean webSubmit = args.remove("--web-submit");
                StandaloneCluster c =
                        StandaloneCluster.prepare(
                                new StandaloneCluster.Settings(
                                        dir, lib, config, port, memory, webSubmit));
                if (!c.running().isEmpty()) {
                    err.println(
                            "a cluster is already running in "
                                    + c.dir()
                                    + ": "
                                    + c.running().keySet());
                    return 1;
                }
                c.startJobManager();
                for (int i = 0; i < tms; i++) {
                    c.startTaskManager();
                }
                awaitTaskManagers(new FlinkRest(c.restUrl()), tms, READY);
                out.println("Flink web UI and REST: " + c.restUrl());
                out.println("Logs: " + c.dir().resolve("log"));
                out.println("Checkpoints: " + c.dir().resolve("checkpoints"));
                out.println("Savepoints: " + c.dir().resolve("savepoints"));
                return 0;
            }
            case "stop" -> {
                StandaloneCluster c = StandaloneCluster.open(dir, lib);
                c.stop();
                out.println("stopped the cluster in " + c.dir());
                return 0;
            }
            case "add-taskmanager" -> {
                StandaloneCluster c = StandaloneCluster.open(dir, lib);
                int before = new FlinkRest(c.restUrl()).overview().path("taskmanagers").asInt();
                c.startTaskManager();
                awaitTaskManagers(new FlinkRest(c.restUrl()), before + 1, READY);
                out.println("TaskManagers: " + (before + 1));
                return 0;
            }
            case "kill" -> {
                StandaloneCluster c = StandaloneCluster.open(dir, lib);
                c.kill(args.get(0));
                out.println("killed " + args.get(0) + " (SIGKILL)");
                return 0;
            }
            case "status" -> {
                StandaloneCluster c = StandaloneCluster.open(dir, lib);
                Map<String, ProcessHandle> running = c.running();
                running.forEach((name, h) -> out.println(name + " pid " + h.pid()));
                try {
                    JsonNode o = new FlinkRest(c.restUrl()).overview();
                    out.printf(
                            "%s: %d TaskManagers, %d of %d slots free, %d jobs running%n",
                            c.restUrl(),
                            o.path("taskmanagers").asInt(),
                            o.path("slots-available").asInt(),
                            o.path("slots-total").asInt(),
                            o.path("jobs-running").asInt());
                } catch (ConnectException e) {
                    out.println(c.restUrl() + ": not answering");
                }
                return running.isEmpty() ? 1 : 0;
            }
            case "submit", "resume" -> {
                // The job's own --parallelism sets its parallelism, on resume too (rescaling).
                String savepoint = command.equals("resume") ? args.remove(0) : null;
                StandaloneCluster c = StandaloneCluster.open(dir, lib);
                String job;
                try {
                    job =
                            JobSubmission.submit(
                                    c.restUrl(),
                                    Path.of(require(jobJar, "--job-jar")),
                                    args,
                                    savepoint);
                } catch (InvalidOptionException e) {
                    err.println("freqcap: " + e.getMessage());
                    return 2;
                }
                out.println("Job " + job + (savepoint == null ? "" : " resumed from " + savepoint));
                return 0;
            }
            case "savepoint", "stop-with-savepoint" -> {
                StandaloneCluster c = StandaloneCluster.open(dir, lib);
                FlinkRest rest = new FlinkRest(c.restUrl());
                String path =
                        command.equals("savepoint")
                                ? rest.savepoint(args.get(0), null, Duration.ofMinutes(10))
                                : rest.stopWithSavepoint(args.get(0), null, Duration.ofMinutes(10));
                out.println(path);
                return 0;
            }
            default -> {
                err.println("unknown command " + command + " (--help lists them)");
                return 2;
            }
        }
    }

    /** Waits until {@code n} TaskManagers are registered with the JobManager. */
    public static void awaitTaskManagers(FlinkRest rest, int n, Duration timeout)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "not answering";
        while (System.nanoTime() < deadline) {
            try {
                JsonNode o = rest.overview();
                if (o.path("taskmanagers").asInt() >= n) {
                    return;
                }
                last = o.toString();
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(250);
        }
        throw new IOException(n + " TaskManagers not up after " + timeout + ": " + last);
    }

    private static String take(List<String> args, String name, String fallback) {
        int i = args.indexOf(name);
        if (i < 0) {
            return fallback;
        }
        if (i + 1 >= args.size()) {
            throw new IllegalArgumentException(name + " needs a value");
        }
        args.remove(i);
        return args.remove(i);
    }

    private static String require(String value, String name) {
        if (value == null) {
            throw new IllegalArgumentException(name + " is required");
        }
        return value;
    }
}
