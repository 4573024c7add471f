package io.freqcap.job.testutils;

import io.freqcap.job.FreqcapJob;
import io.freqcap.job.FreqcapMain;
import io.freqcap.job.KafkaConnectors;
import io.freqcap.job.KafkaSettings;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.mirror.RedisMirrorSink;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.message.RawRecord;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The job as {@link FreqcapMain} wires it, its input passing through {@link FailOnce} first: the
 * one failure a test injects.
 */
public final class FailingOnceJob {
    private FailingOnceJob() {}

    /**
     * The job as {@link FreqcapMain} wires it, its input passing through {@link FailOnce} first
     * (the one failure a test injects, after {@code failAfter} records): Kafka in and out, the
     * config topic as the only control input.
     *
     * @param mirror the Redis mirror's sink, or null for none
     */
    public static void failingOnceJob(
            StreamExecutionEnvironment env,
            Configuration options,
            int failAfter,
            CappingSettings settings,
            RedisMirrorSink mirror) {
        KafkaSettings kafka = KafkaSettings.of(options);
        failingOnceJob(env, kafka, failAfter, settings, mirror, null, null);
    }

    /**
     * The same, with the preferences and receipts topics of the options when they name them
     * (contract.md §10, §11).
     */
    public static void failingOnceJobWithUserInputs(
            StreamExecutionEnvironment env,
            Configuration options,
            int failAfter,
            CappingSettings settings) {
        KafkaSettings kafka = KafkaSettings.of(options);
        failingOnceJob(
                env,
                kafka,
                failAfter,
                settings,
                null,
                kafka.topics().preferences() == null
                        ? null
                        : env.fromSource(
                                        KafkaConnectors.preferencesSource(kafka),
                                        WatermarkStrategy.noWatermarks(),
                                        "preferences")
                                .uid("preferences"),
                kafka.topics().receipts() == null
                        ? null
                        : env.fromSource(
                                        KafkaConnectors.receiptsSource(kafka),
                                        WatermarkStrategy.noWatermarks(),
                                        "receipts")
                                .uid("receipts"));
    }

    private static void failingOnceJob(
            StreamExecutionEnvironment env,
            KafkaSettings kafka,
            int failAfter,
            CappingSettings settings,
            RedisMirrorSink mirror,
            DataStream<RawRecord> preferences,
            DataStream<RawRecord> receipts) {
        DataStream<RawRecord> input =
                env.fromSource(
                                KafkaConnectors.inputSource(kafka),
                                WatermarkStrategy.noWatermarks(),
                                "in")
                        .uid("in")
                        .map(new FailOnce(failAfter))
                        .uid("fail-once")
                        .name("fail-once");
        DataStream<ControlRecord> control =
                env.fromSource(
                                KafkaConnectors.controlSource(kafka, ControlRecord.Kind.CONFIG),
                                WatermarkStrategy.noWatermarks(),
                                "config")
                        .uid("config")
                        .setParallelism(1);
        FreqcapJob.build(
                settings,
                input,
                preferences,
                receipts,
                control,
                KafkaConnectors.deliverySink(kafka),
                KafkaConnectors.auditSink(kafka),
                mirror);
    }
}
