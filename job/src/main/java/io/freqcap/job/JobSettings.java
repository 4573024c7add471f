package io.freqcap.job;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import io.freqcap.operators.capping.Bounds;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.control.ControlHandler;
import io.freqcap.operators.mirror.MirrorSettings;
import io.freqcap.operators.segments.FlinkFileLoader;
import io.freqcap.operators.segments.SegmentTable;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.lifetime.LifetimeCount;
import io.freqcap.schema.message.FutureBound;
import io.freqcap.schema.segment.SegmentUpdate;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Everything the job's graph needs, turned from options ({@link FreqcapOptions}, declarations only)
 * into typed settings once: every option checked, and the limits file and the segments file read
 * and checked here, not in every task.
 *
 * @param mirror the Redis mirror, or null without {@code --redis}
 */
public record JobSettings(
        KafkaSettings kafka,
        CappingSettings capping,
        Duration cleanupInterval,
        MirrorSettings mirror) {

    /**
     * The same, where a start without state does not apply the commands before these config-topic
     * offsets ({@link CappingSettings#commandsFrom}).
     */
    public JobSettings withCommandsFrom(java.util.Map<Integer, Long> offsets) {
        return new JobSettings(kafka, capping.withCommandsFrom(offsets), cleanupInterval, mirror);
    }

    /** Checks the options, reads {@code --limits} and {@code --segments}. */
    public static JobSettings parse(Configuration options, boolean needKafka)
            throws InvalidOptionException {
        LimitConfig limits = requireJobOptions(options, needKafka);
        return from(options, limits, readSegments(options));
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
                        bounds(options),
                        CappingSettings.DEFAULT_LIVE_HISTORY_BYTES,
                        java.util.Map.of(),
                        null),
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

    /** Checks the options the job itself needs and reads and checks the initial config, once. */
    public static LimitConfig requireJobOptions(Configuration conf, boolean needKafka)
            throws FreqcapOptions.InvalidOptionException {
        if (needKafka && conf.getOptional(FreqcapOptions.BOOTSTRAP_SERVERS).isEmpty()) {
            throw new FreqcapOptions.InvalidOptionException("--bootstrap-servers is required");
        }
        if (conf.getOptional(FreqcapOptions.PARALLELISM).map(p -> p < 1).orElse(false)) {
            throw new FreqcapOptions.InvalidOptionException(
                    "--parallelism: must be a positive integer");
        }
        if (conf.get(FreqcapOptions.REDIS_MAX_BACKLOG) < 1) {
            throw new FreqcapOptions.InvalidOptionException(
                    "--redis-max-backlog: must be a positive integer");
        }
        if (conf.get(FreqcapOptions.CHECKPOINT_INTERVAL).toMillis() < 10) {
            throw new FreqcapOptions.InvalidOptionException("--checkpoint-interval: at least 10ms");
        }
        Duration txTimeout = conf.get(FreqcapOptions.TRANSACTION_TIMEOUT);
        if (txTimeout.compareTo(conf.get(FreqcapOptions.CHECKPOINT_INTERVAL)) <= 0) {
            throw new FreqcapOptions.InvalidOptionException(
                    "--transaction-timeout: "
                            + txTimeout
                            + " must be longer than --checkpoint-interval "
                            + conf.get(FreqcapOptions.CHECKPOINT_INTERVAL)
                            + " (a transaction stays open from one checkpoint to the next)");
        }
        if (conf.getOptional(FreqcapOptions.KAFKA_CONFIG).isPresent()) {
            String file = conf.get(FreqcapOptions.KAFKA_CONFIG);
            try {
                KafkaClientConfig.read(java.nio.file.Path.of(file));
            } catch (IOException | IllegalArgumentException e) {
                throw new FreqcapOptions.InvalidOptionException(
                        "--kafka-config: cannot read " + file + ": " + e.getMessage());
            }
        }
        int cache = conf.get(FreqcapOptions.HISTORY_CACHE);
        if (cache < 0 || cache > CappingSettings.MAX_HISTORY_CACHE_SLOTS) {
            throw new FreqcapOptions.InvalidOptionException(
                    "--history-cache: must be 0.."
                            + CappingSettings.MAX_HISTORY_CACHE_SLOTS
                            + ", got "
                            + cache);
        }
        if (conf.get(FreqcapOptions.CLEANUP_INTERVAL).toMillis() < 1000) {
            throw new FreqcapOptions.InvalidOptionException("--cleanup-interval: at least 1s");
        }
        if (conf.get(FreqcapOptions.MAX_RECORD_BYTES) < Bounds.MIN_RECORD_BYTES) {
            throw new FreqcapOptions.InvalidOptionException(
                    "--max-record-bytes: at least " + Bounds.MIN_RECORD_BYTES);
        }
        try {
            FutureBound.parse(conf.get(FreqcapOptions.MAX_FUTURE));
        } catch (IllegalArgumentException e) {
            throw new FreqcapOptions.InvalidOptionException("--max-future: " + e.getMessage());
        }
        try {
            LifetimeCount.parseRetention(conf.get(FreqcapOptions.LIFETIME_RETENTION));
        } catch (IllegalArgumentException e) {
            throw new FreqcapOptions.InvalidOptionException(
                    "--lifetime-retention: " + e.getMessage());
        }
        if (conf.get(FreqcapOptions.MAX_SEGMENT_BYTES) < 1) {
            throw new FreqcapOptions.InvalidOptionException(
                    "--max-segment-bytes: must be a positive integer");
        }
        for (String prefix : segmentUris(conf)) {
            if (prefix.isEmpty()) {
                throw new FreqcapOptions.InvalidOptionException("--segment-uris: an empty prefix");
            }
        }
        if (conf.getOptional(FreqcapOptions.REDIS).isPresent()) {
            try {
                io.freqcap.operators.mirror.RedisConnection.parse(conf.get(FreqcapOptions.REDIS));
                if (conf.getOptional(FreqcapOptions.REDIS_PASSWORD_FILE).isPresent()) {
                    io.freqcap.operators.mirror.RedisConnection.readPassword(
                            conf.get(FreqcapOptions.REDIS_PASSWORD_FILE));
                }
            } catch (IllegalArgumentException e) {
                throw new FreqcapOptions.InvalidOptionException("--redis: " + e.getMessage());
            }
        }
        if (!conf.get(FreqcapOptions.REDIS_KEY_PREFIX).matches("[^\\s{}]+")) {
            throw new FreqcapOptions.InvalidOptionException(
                    "--redis-key-prefix: must be non-empty, without spaces or braces");
        }
        String limits =
                conf.getOptional(FreqcapOptions.LIMITS)
                        .orElseThrow(
                                () ->
                                        new FreqcapOptions.InvalidOptionException(
                                                "--limits is required"));
        String json = readOption("--limits", limits);
        try {
            return LimitConfig.parse(json);
        } catch (MalformedRecordException e) {
            throw new FreqcapOptions.InvalidOptionException(
                    "--limits: invalid config in " + limits + ": " + e.getMessage());
        }
    }

    /**
     * Reads and checks the --segments file: every entry a full load whose bitmap reads as valid.
     *
     * @return the file's JSON, or null without --segments
     */
    public static String readSegments(Configuration conf)
            throws FreqcapOptions.InvalidOptionException {
        String file = conf.getOptional(FreqcapOptions.SEGMENTS).orElse(null);
        if (file == null) {
            return null;
        }
        String json = readOption("--segments", file);
        try {
            SegmentTable check = new SegmentTable();
            FlinkFileLoader loader = bounds(conf).segmentLoader();
            try {
                for (SegmentUpdate u : ControlHandler.initialSegments(json)) {
                    String error = check.apply(u, loader);
                    if (error != null) {
                        throw new MalformedRecordException(error);
                    }
                }
            } finally {
                check.close(); // gives back the shared copies it read
            }
        } catch (MalformedRecordException e) {
            throw new FreqcapOptions.InvalidOptionException(
                    "--segments: invalid segments in " + file + ": " + e.getMessage());
        }
        return json;
    }

    /** The --segment-uris prefixes; empty for any. */
    static List<String> segmentUris(Configuration conf) {
        List<String> out = new ArrayList<>();
        conf.getOptional(FreqcapOptions.SEGMENT_URIS)
                .ifPresent(
                        v -> {
                            for (String p : v.split(",", -1)) {
                                out.add(p.trim());
                            }
                        });
        return out;
    }

    /** The bounds of records and segment reads the options set. */
    public static Bounds bounds(Configuration conf) {
        return new Bounds(
                conf.get(FreqcapOptions.MAX_RECORD_BYTES),
                conf.get(FreqcapOptions.MAX_SEGMENT_BYTES),
                segmentUris(conf),
                FutureBound.parse(conf.get(FreqcapOptions.MAX_FUTURE)),
                LifetimeCount.parseRetention(conf.get(FreqcapOptions.LIFETIME_RETENTION)));
    }

    /** The file an option names, read; one that cannot be read is the option's error. */
    private static String readOption(String option, String file)
            throws FreqcapOptions.InvalidOptionException {
        try {
            return readText(file);
        } catch (IOException e) {
            throw new FreqcapOptions.InvalidOptionException(
                    option + ": cannot read " + file + ": " + e.getMessage());
        }
    }

    /** Reads a file path or uri through Flink's file systems (file://, s3://, hdfs://, ...). */
    static String readText(String pathOrUri) throws IOException {
        Path path = new Path(pathOrUri);
        FileSystem fs = path.getFileSystem();
        try (InputStream in = fs.open(path)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            in.transferTo(out);
            return out.toString(java.nio.charset.StandardCharsets.UTF_8);
        }
    }
}
