package io.freqcap.job;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.mirror.MirrorSettings;
import io.freqcap.schema.config.LimitConfig;
import java.time.Duration;
import org.apache.flink.configuration.Configuration;

/**
 * Everything the job's graph needs, turned from options into typed settings once: the limits file
 * and the segments file read and checked here, not in every task.
 *
 * @param mirror the Redis mirror, or null without {@code --redis}
 */
public record JobSettings(
        KafkaSettings kafka,
        CappingSettings capping,
        Duration cleanupInterval,
        MirrorSettings mirror) {

    /** Checks the options, reads {@code --limits} and {@code --segments}. */
    public static JobSettings parse(Configuration options, boolean needKafka)
            throws InvalidOptionException {
        LimitConfig limits = FreqcapOptions.requireJobOptions(options, needKafka);
        return from(options, limits, FreqcapOptions.readSegments(options));
    }

    /**
     * Settings from options already checked, with the initial config and segments given.
     *
     * @param initialSegmentsJson null for none
     */
    public static JobSettings from(
            Configuration options, LimitConfig initialConfig, String initialSegmentsJson) {
        return new JobSettings(
                KafkaSettings.of(options),
                new CappingSettings(
                        initialConfig,
                        initialSegmentsJson,
                        false,
                        options.get(FreqcapOptions.HISTORY_CACHE),
                        FreqcapOptions.bounds(options),
                        CappingSettings.DEFAULT_LIVE_HISTORY_BYTES),
                options.get(FreqcapOptions.CLEANUP_INTERVAL),
                options.getOptional(FreqcapOptions.REDIS)
                        .map(
                                uri ->
                                        MirrorSettings.of(
                                                uri,
                                                options.get(FreqcapOptions.REDIS_KEY_PREFIX),
                                                options.get(FreqcapOptions.REDIS_MAX_BACKLOG),
                                                options.getOptional(
                                                                FreqcapOptions.REDIS_PASSWORD_FILE)
                                                        .orElse(null)))
                        .orElse(null));
    }
}
