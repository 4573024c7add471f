package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.local.LocalRunner;
import io.freqcap.job.local.LocalRunnerITCase;
import io.freqcap.job.local.StateDir;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import io.freqcap.schema.config.LimitConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local runner as a real single-machine deployment: killed with {@code kill -9} mid-stream and
 * started again with the same {@code --state-dir}, it resumes from its latest checkpoint, and every
 * decision equals that of a run never stopped. A state dir holding another job's checkpoint is one
 * clear error.
 */
class LocalRunnerRestartITCase {
    static final int USERS = 2_000;
    static final String CONFIG =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":3}]}]}";

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    /** Three messages a user within one day, from {@code first} on: the cap is 3 a day. */
    static List<Input> batch(int first, int perUser) {
        List<Input> out = new ArrayList<>();
        int seq = first * USERS;
        for (int k = first; k < first + perUser; k++) {
            for (int u = 0; u < USERS; u++) {
                out.add(
                        Traffic.pushMessage(
                                seq++, u, "m-" + u + "-" + k, Traffic.START + k * 60_000L));
            }
        }
        return out;
    }

    List<String> runnerArgs(String name, Path stateDir, Path limits) throws Exception {
        List<String> args = new ArrayList<>(KafkaPipelineSupport.args(kafka, name, limits));
        args.addAll(
                List.of(
                        "--web-port",
                        Integer.toString(LocalRunnerITCase.freePort()),
                        "--state-dir",
                        stateDir.toString()));
        return args;
    }

    /** The runner in a JVM of its own (so that it can be killed), output to {@code log}. */
    static Process startRunner(List<String> args, Path log) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx1g");
        for (String pkg :
                List.of(
                        "java.lang",
                        "java.util",
                        "java.util.concurrent",
                        "java.lang.reflect",
                        "java.io",
                        "java.nio",
                        "sun.nio.ch",
                        "java.net",
                        "java.text",
                        "java.time")) {
            cmd.add("--add-opens=java.base/" + pkg + "=ALL-UNNAMED");
        }
        // The runner's temp dirs where this test looks for them (the build's, not /tmp).
        cmd.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(LocalRunner.class.getName());
        cmd.addAll(args);
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
    }

    static int committedOutputs(String name, int atLeast, Duration timeout) {
        var out =
                JobOutputs.readCommitted(
                        kafka.bootstrapServers(),
                        List.of(name + "-deliveries", name + "-audit"),
                        atLeast,
                        timeout);
        return out.values().stream().mapToInt(List::size).sum();
    }

    @Test
    @Timeout(300)
    void killedMidStreamAndStartedAgainDecidesAsIfNeverStopped() throws Exception {
        String name = "restart";
        kafka.createTopics(4, List.of(name + "-in", name + "-deliveries", name + "-audit"));
        kafka.createTopics(1, List.of(name + "-config", name + "-segments"));
        Path limits = Files.writeString(tmp.resolve("limits.json"), CONFIG);
        Path stateDir = tmp.resolve("state");
        Path log1 = tmp.resolve("runner-1.log");
        Path log2 = tmp.resolve("runner-2.log");
        List<Input> first = batch(0, 3); // fills every user's day
        List<Input> second = batch(3, 3); // all over the cap: REJECTED, unless history is lost
        List<Input> all = new ArrayList<>(first);
        all.addAll(second);

        Process runner = startRunner(runnerArgs(name, stateDir, limits), log1);
        Process again = null;
        try {
            Traffic.produce(kafka.bootstrapServers(), name + "-in", 4, first);
            assertTrue(
                    committedOutputs(name, first.size() / 2, Duration.ofSeconds(90))
                            >= first.size() / 2,
                    "the first run decides: " + Files.readString(log1));
            Traffic.produce(kafka.bootstrapServers(), name + "-in", 4, second);
            // Killed at once: the second batch just sent, in flight or not yet read.
            List<Path> leftBehind = runnerTempDirs(runner.pid());
            runner.destroyForcibly(); // SIGKILL
            assertTrue(runner.waitFor(30, TimeUnit.SECONDS));
            int beforeRestart = committedOutputs(name, all.size(), Duration.ofSeconds(3));
            assertTrue(beforeRestart < all.size(), beforeRestart + " decided before the kill");
            assertEquals(1, leftBehind.size(), "the killed run's temp dir");
            assertTrue(Files.exists(leftBehind.get(0)));
            assertFalse(
                    new StateDirView(stateDir).checkpoints().isEmpty(),
                    "the killed run left its checkpoints");

            again = startRunner(runnerArgs(name, stateDir, limits), log2);
            var out =
                    JobOutputs.readOutputs(
                            kafka.bootstrapServers(), name, all.size(), Duration.ofSeconds(120));
            String printed = Files.readString(log2);
            assertTrue(printed.contains("Resuming from checkpoint "), printed);
            // Exactly one output per input, each the decision of a run that never stopped.
            Map<Integer, JobOutputs.Output> outputs =
                    JobOutputs.checkOutputs(
                            all,
                            out.get(name + "-deliveries"),
                            out.get(name + "-audit"),
                            Map.of(1L, LimitConfig.parse(CONFIG)));
            long allowed =
                    outputs.values().stream().filter(o -> o.decision().equals("ALLOWED")).count();
            assertEquals(3L * USERS, allowed, "3 a day per user, across the kill");
            assertTrue(printed.contains("left by a run that was killed"), printed);
            assertFalse(Files.exists(leftBehind.get(0)), "cleaned at the next start");

            awaitPrinted(log2, "freqcap is running");
            again.destroy(); // SIGTERM: a clean stop
            assertTrue(again.waitFor(90, TimeUnit.SECONDS), "stops on SIGTERM");
            assertTrue(Files.readString(log2).contains("State kept in "), Files.readString(log2));
        } finally {
            runner.destroyForcibly();
            if (again != null) {
                again.destroyForcibly();
            }
        }
    }

    static void awaitPrinted(Path log, String text) throws Exception {
        for (int i = 0; i < 600 && !Files.readString(log).contains(text); i++) {
            Thread.sleep(100);
        }
        assertTrue(Files.readString(log).contains(text), Files.readString(log));
    }

    /** The runner's temp dirs holding the given pid. */
    static List<Path> runnerTempDirs(long pid) throws IOException {
        List<Path> out = new ArrayList<>();
        try (var all = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            for (Path p : (Iterable<Path>) all::iterator) {
                Path pidFile = p.resolve("pid");
                if (p.getFileName().toString().startsWith("freqcap-local")
                        && Files.exists(pidFile)
                        && Files.readString(pidFile).trim().equals(Long.toString(pid))) {
                    out.add(p);
                }
            }
        }
        return out;
    }

    /** What a state dir holds, read as the runner reads it. */
    record StateDirView(Path dir) {
        List<Path> checkpoints() throws Exception {
            try (StateDir d = StateDir.open(dir)) {
                return d.completedCheckpoints();
            }
        }
    }

    /** Counts per key: state of an operator the freqcap job does not have. */
    static final class Counting extends RichMapFunction<Long, Long> {
        private transient ValueState<Long> count;

        @Override
        public void open(OpenContext openContext) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("n", Types.LONG));
        }

        @Override
        public Long map(Long v) throws Exception {
            long n = count.value() == null ? 1 : count.value() + 1;
            count.update(n);
            return n;
        }
    }

    @Test
    @Timeout(180)
    void aStateDirOfAnotherJobIsOneClearError() throws Exception {
        Path stateDir = tmp.resolve("other");
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "hashmap");
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        conf.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                stateDir.resolve("checkpoints").toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(200));
        conf.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        env.fromSource(
                        new DataGeneratorSource<>(
                                i -> i % 10,
                                Long.MAX_VALUE,
                                RateLimiterStrategy.perSecond(100),
                                Types.LONG),
                        WatermarkStrategy.noWatermarks(),
                        "numbers")
                .uid("numbers")
                .keyBy(v -> v, Types.LONG)
                .map(new Counting())
                .uid("counting")
                .sinkTo(new DiscardingSink<>());
        JobClient other = env.executeAsync("another job");
        StateDirView view = new StateDirView(stateDir);
        for (int i = 0; i < 100 && view.checkpoints().isEmpty(); i++) {
            Thread.sleep(100);
        }
        KafkaPipelineSupport.cancel(other);
        assertFalse(view.checkpoints().isEmpty(), "another job's checkpoint");

        String name = "foreign";
        kafka.createTopics(2, List.of(name + "-in", name + "-deliveries", name + "-audit"));
        kafka.createTopics(1, List.of(name + "-config", name + "-segments"));
        Path limits = Files.writeString(tmp.resolve("limits.json"), CONFIG);
        var e =
                assertThrows(
                        FreqcapOptions.InvalidOptionException.class,
                        () ->
                                LocalRunner.run(
                                        runnerArgs(name, stateDir, limits).toArray(new String[0]),
                                        System.out,
                                        null));
        assertTrue(
                e.getMessage().startsWith("--state-dir: cannot resume from " + stateDir),
                e.getMessage());
        assertTrue(e.getMessage().contains("another job or version"), e.getMessage());
    }
}
