package io.freqcap.job;

import io.freqcap.job.FreqcapOptions.Guarantee;
import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import io.freqcap.operators.capping.state.RocksDBTuning;
import io.freqcap.operators.mirror.RedisMirrorSink;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.message.RawRecord;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/** The job jar's entry point: parse options, build the Kafka graph, run. */
public final class FreqcapMain {
    private FreqcapMain() {}

    /** The job's name on a cluster (its web UI, REST API and metrics' {@code job_name}). */
    public static final String JOB_NAME = "freqcap";

    public static void main(String[] args) throws Exception {
        if (Arrays.asList(args).contains("--help")) {
            System.out.println(CommandLine.usage("flink run freqcap-job.jar", List.of()));
            return;
        }
        Configuration options;
        JobSettings settings;
        try {
            options = CommandLine.parse(args, List.of());
            settings = JobSettings.parse(options, true);
            settings =
                    settings.withCommandsFrom(
                            KafkaPreflight.check(settings.kafka(), KafkaPreflight.TIMEOUT));
            RedisPreflight.check(settings.mirror(), RedisPreflight.TIMEOUT);
        } catch (InvalidOptionException e) {
            throw fail(e);
        }
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(flinkConfig(options));
        wireKafka(env, settings);
        env.execute(JOB_NAME);
    }

    /**
     * One clear line and a non-zero exit. {@code System.exit} only where main owns its process (the
     * {@code flink run} client or a plain {@code java} call); when a cluster runs main (REST
     * submission) it would take the JobManager down, so the error is thrown there instead.
     */
    static RuntimeException fail(InvalidOptionException e) {
        System.err.println("freqcap: " + e.getMessage());
        if ("main".equals(Thread.currentThread().getName())) {
            System.exit(2);
        }
        return new IllegalArgumentException("freqcap: " + e.getMessage());
    }

    /**
     * Flink settings the job needs, with defaults that make it work anywhere: RocksDB with
     * incremental checkpoints, no silent Kryo, checkpoints kept on cancel. Cluster configuration
     * (checkpoint storage, memory) comes from deploy/ and the cluster.
     */
    public static Configuration flinkConfig(Configuration options) {
        Configuration c = new Configuration();
        c.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        c.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        c.set(PipelineOptions.GENERIC_TYPES, false);
        // Records are immutable and no function keeps one: chained operators may share them.
        c.set(PipelineOptions.OBJECT_REUSE, true);
        c.set(
                CheckpointingOptions.CHECKPOINTING_INTERVAL,
                options.get(FreqcapOptions.CHECKPOINT_INTERVAL));
        c.set(
                CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE,
                options.get(FreqcapOptions.GUARANTEE) == Guarantee.EXACTLY_ONCE
                        ? CheckpointingMode.EXACTLY_ONCE
                        : CheckpointingMode.AT_LEAST_ONCE);
        c.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        RocksDBTuning.SETTINGS.forEach(c::setString);
        options.getOptional(FreqcapOptions.PARALLELISM)
                .ifPresent(p -> c.set(CoreOptions.DEFAULT_PARALLELISM, p));
        return c;
    }

    /** Kafka sources and sinks around {@link FreqcapJob}. */
    public static void wireKafka(StreamExecutionEnvironment env, JobSettings settings) {
        KafkaSettings kafka = settings.kafka();
        DataStream<RawRecord> input =
                env.fromSource(
                                KafkaConnectors.inputSource(kafka),
                                WatermarkStrategy.noWatermarks(),
                                "outbound-messages")
                        .uid("input-source");
        var configs = KafkaConnectors.controlSource(kafka, ControlRecord.Kind.CONFIG);
        var segments = KafkaConnectors.controlSource(kafka, ControlRecord.Kind.SEGMENT);
        var ticks = CleanupTicks.source(settings.cleanupInterval());
        DataStream<ControlRecord> controls =
                controlInput(env, configs, "limit-config", "config-source")
                        .union(
                                controlInput(env, segments, "segment-updates", "segments-source"),
                                controlInput(env, ticks, "cleanup-ticks", "cleanup-ticks"));
        if (settings.mirror() != null) {
            controls =
                    controls.union(
                            controlInput(
                                    env,
                                    CleanupTicks.mirror(MIRROR_TICK_INTERVAL),
                                    "mirror-ticks",
                                    "mirror-ticks"));
        }
        DataStream<RawRecord> preferences =
                optionalInput(
                        env,
                        kafka.topics().preferences(),
                        () -> KafkaConnectors.preferencesSource(kafka),
                        "user-preferences",
                        "preferences-source");
        DataStream<RawRecord> receipts =
                optionalInput(
                        env,
                        kafka.topics().receipts(),
                        () -> KafkaConnectors.receiptsSource(kafka),
                        "delivery-receipts",
                        "receipts-source");
        FreqcapJob.build(
                kafka.topics().held() == null
                        ? settings.capping()
                        : settings.capping().withHeldTopic(new KafkaHeldTopic(kafka)),
                input,
                preferences,
                receipts,
                controls,
                KafkaConnectors.deliverySink(kafka),
                KafkaConnectors.auditSink(kafka),
                settings.mirror() == null ? null : new RedisMirrorSink(settings.mirror()));
    }

    /** How soon a mirror that dropped writes is rebuilt once Redis answers again. */
    static final Duration MIRROR_TICK_INTERVAL = Duration.ofSeconds(1);

    /** A control input: tiny, so one source task; its uid keeps savepoints mappable. */
    private static DataStream<ControlRecord> controlInput(
            StreamExecutionEnvironment env,
            Source<ControlRecord, ?, ?> source,
            String name,
            String uid) {
        return env.fromSource(source, WatermarkStrategy.noWatermarks(), name)
                .uid(uid)
                .setParallelism(1);
    }

    /** The records of an optional topic, or null when it is not given. */
    private static DataStream<RawRecord> optionalInput(
            StreamExecutionEnvironment env,
            String topic,
            Supplier<Source<RawRecord, ?, ?>> source,
            String name,
            String uid) {
        if (topic == null) {
            return null;
        }
        return env.fromSource(source.get(), WatermarkStrategy.noWatermarks(), name).uid(uid);
    }
}
