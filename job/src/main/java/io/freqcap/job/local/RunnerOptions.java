package io.freqcap.job.local;

import java.time.Duration;
import java.util.List;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/** The local runner's own options, beside the job's ({@code FreqcapOptions}). */
public final class RunnerOptions {
    private RunnerOptions() {}

    public static final ConfigOption<Duration> DURATION =
            ConfigOptions.key("duration")
                    .durationType()
                    .noDefaultValue()
                    .withDescription("Stop after this long (e.g. 60s); default: run until Ctrl-C.");
    public static final ConfigOption<Integer> USERS =
            ConfigOptions.key("users")
                    .intType()
                    .defaultValue(100_000)
                    .withDescription("Generator: number of users.");
    public static final ConfigOption<Integer> RATE =
            ConfigOptions.key("rate")
                    .intType()
                    .defaultValue(2_000)
                    .withDescription("Generator: messages per second.");
    public static final ConfigOption<Boolean> GENERATE =
            ConfigOptions.key("generate")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription("Generate traffic also into an external Kafka.");
    public static final ConfigOption<Integer> WEB_PORT =
            ConfigOptions.key("web-port")
                    .intType()
                    .defaultValue(8081)
                    .withDescription("Port of the Flink web UI and REST API.");

    public static final ConfigOption<String> PROMETHEUS_PORT =
            ConfigOptions.key("prometheus-port")
                    .stringType()
                    .defaultValue("9249-9259")
                    .withDescription(
                            "Port (or range) of Flink's Prometheus reporter: the job's metrics at"
                                    + " http://localhost:<port>/metrics; off for none.");

    public static final ConfigOption<String> STATE_DIR =
            ConfigOptions.key("state-dir")
                    .stringType()
                    .defaultValue("./freqcap-state")
                    .withDescription(
                            "Where the runner keeps its checkpoints (and, with the embedded Kafka"
                                    + " and Redis, their data); started again with the same"
                                    + " directory it resumes from its latest checkpoint.");

    public static final ConfigOption<Boolean> NO_JOB =
            ConfigOptions.key("no-job")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "Start Kafka, Redis, the topics and the traffic only; the job runs"
                                    + " elsewhere (bin/freqcap-cluster submit).");

    static final List<ConfigOption<?>> RUNNER_OPTIONS =
            List.of(DURATION, USERS, RATE, GENERATE, WEB_PORT, PROMETHEUS_PORT, STATE_DIR, NO_JOB);
}
