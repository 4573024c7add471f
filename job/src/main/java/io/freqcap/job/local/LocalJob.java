package io.freqcap.job.local;

import io.freqcap.job.FreqcapMain;
import io.freqcap.job.FreqcapOptions;
import io.freqcap.job.JobSettings;
import io.freqcap.schema.config.LimitConfig;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Map;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/** The local runner's job: an embedded Flink with its web UI, on loopback only. */
public final class LocalJob {
    private LocalJob() {}

    /**
     * Turns on Flink's Prometheus metrics (deploy/config.yaml's names and labels, segment ids such
     * as {@code *} kept as they are in labels), served on the loopback interface only.
     *
     * @param port a port or a range ({@code 9249-9259})
     */
    public static void prometheus(Configuration flink, String port) {
        String prefix = "metrics.reporter.prom.";
        flink.setString(
                prefix + "factory.class", LoopbackPrometheusReporter.Factory.class.getName());
        flink.setString(prefix + "port", port);
        flink.setString(prefix + "filterLabelValueCharacters", "false");
    }

    /** The job in an embedded Flink with its web UI, resumed from the state dir if it can be. */
    static JobClient start(
            Configuration options,
            LimitConfig limits,
            String segmentsJson,
            Map<Integer, Long> commandsFrom,
            StateDir state,
            PrintStream out)
            throws Exception {
        Configuration flink = FreqcapMain.flinkConfig(options);
        flink.set(RestOptions.PORT, options.get(RunnerOptions.WEB_PORT));
        // The progress line reads the job's metrics through the REST API every five seconds:
        // fetch them fresher than Flink's default of ten.
        flink.set(MetricOptions.METRIC_FETCHER_UPDATE_INTERVAL, Duration.ofSeconds(1));
        // Every server of the embedded Flink on loopback: REST and web UI, the blob server (the
        // JobManager's bind host), the TaskManager's data port.
        flink.set(RestOptions.BIND_ADDRESS, "localhost");
        flink.set(JobManagerOptions.BIND_HOST, "localhost");
        flink.set(TaskManagerOptions.BIND_HOST, "localhost");
        if (!options.get(RunnerOptions.PROMETHEUS_PORT).equals("off")) {
            prometheus(flink, options.get(RunnerOptions.PROMETHEUS_PORT));
        }
        flink.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        Resumption resumption = Resumption.prepare(state, flink, out);
        if (options.getOptional(FreqcapOptions.PARALLELISM).isEmpty()) {
            flink.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        }
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.createLocalEnvironmentWithWebUI(flink);
        FreqcapMain.wireKafka(
                env,
                JobSettings.from(options, limits, segmentsJson).withCommandsFrom(commandsFrom));
        JobClient job = resumption.submit(env, "freqcap (local)");
        return job;
    }
}
