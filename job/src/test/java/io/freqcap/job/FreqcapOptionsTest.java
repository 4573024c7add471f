package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FreqcapOptionsTest {
    static final String VALID =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":1}]}]}";

    @TempDir Path tmp;

    static Configuration parse(String... args) throws InvalidOptionException {
        return CommandLine.parse(args, List.of());
    }

    static String error(Path limitsOrNull, String... args) {
        return assertThrows(
                        InvalidOptionException.class,
                        () -> {
                            Configuration c = parse(args);
                            JobSettings.requireJobOptions(c, true);
                        })
                .getMessage();
    }

    /** The error of a command line with the required options and {@code extra}. */
    static String errorWithRequired(Path limits, String... extra) {
        String[] args = new String[4 + extra.length];
        args[0] = "--bootstrap-servers";
        args[1] = "k";
        args[2] = "--limits";
        args[3] = limits.toString();
        System.arraycopy(extra, 0, args, 4, extra.length);
        return error(null, args);
    }

    @Test
    void defaultsFollowTheContract() throws Exception {
        Configuration c = parse("--bootstrap-servers", "k:9092", "--limits", "x");
        assertEquals("freqcap", c.get(FreqcapOptions.GROUP_ID));
        assertEquals("outbound-messages", c.get(FreqcapOptions.INPUT_TOPIC));
        assertEquals("segment-updates", c.get(FreqcapOptions.SEGMENTS_TOPIC));
        assertEquals("limit-config", c.get(FreqcapOptions.CONFIG_TOPIC));
        assertEquals("deliveries", c.get(FreqcapOptions.DELIVERY_TOPIC));
        assertEquals("capping-audit", c.get(FreqcapOptions.AUDIT_TOPIC));
        assertEquals("fc", c.get(FreqcapOptions.REDIS_KEY_PREFIX));
        assertEquals(1_000_000L, c.get(FreqcapOptions.REDIS_MAX_BACKLOG));
        assertEquals(FreqcapOptions.Guarantee.EXACTLY_ONCE, c.get(FreqcapOptions.GUARANTEE));
        assertEquals(Duration.ofSeconds(10), c.get(FreqcapOptions.CHECKPOINT_INTERVAL));
        assertEquals(
                FreqcapOptions.StartingOffsets.COMMITTED, c.get(FreqcapOptions.STARTING_OFFSETS));
        assertTrue(c.getOptional(FreqcapOptions.PARALLELISM).isEmpty());
    }

    @Test
    void readsEveryFormOfValue() throws Exception {
        Configuration c =
                parse(
                        "--guarantee",
                        "at-least-once",
                        "--starting-offsets=latest",
                        "--checkpoint-interval",
                        "500ms",
                        "--parallelism",
                        "4");
        assertEquals(FreqcapOptions.Guarantee.AT_LEAST_ONCE, c.get(FreqcapOptions.GUARANTEE));
        assertEquals(FreqcapOptions.StartingOffsets.LATEST, c.get(FreqcapOptions.STARTING_OFFSETS));
        assertEquals(Duration.ofMillis(500), c.get(FreqcapOptions.CHECKPOINT_INTERVAL));
        assertEquals(4, c.get(FreqcapOptions.PARALLELISM));
    }

    @Test
    void rejectsBadOptionsWithOneLine() throws Exception {
        Path good = Files.writeString(tmp.resolve("ok.json"), VALID);
        Path bad = Files.writeString(tmp.resolve("bad.json"), "{\"version\":1,\"rules\":[]}");
        assertEquals("unknown option --limit (see --help)", error(null, "--limit", "x"));
        assertEquals("--limits is required", error(null, "--bootstrap-servers", "k:9092"));
        assertEquals("--bootstrap-servers is required", error(null, "--limits", good.toString()));
        // option, value, the line, for values a start without the option's own checks refuses
        String[][] refused = {
            {"--parallelism", "two", "--parallelism: invalid value \"two\" (an integer)"},
            {
                "--checkpoint-interval",
                "soon",
                "--checkpoint-interval: invalid value \"soon\" (a duration like 10s, 500ms, 1min)"
            },
            {
                "--starting-offsets",
                "middle",
                "--starting-offsets: invalid value \"middle\" (earliest, latest or committed)"
            },
        };
        for (String[] c : refused) {
            assertEquals(c[2], error(null, c[0], c[1]));
        }
        // the same, for values the job's checks refuse once the required options are given
        String[][] checked = {
            {"--parallelism", "0", "--parallelism: must be a positive integer"},
            {"--history-cache", "-1", "--history-cache: must be 0..67108864, got -1"},
            {"--history-cache", "67108865", "--history-cache: must be 0..67108864, got 67108865"},
        };
        for (String[] c : checked) {
            assertEquals(c[2], errorWithRequired(good, c[0], c[1]));
        }
        assertEquals("--group-id: missing value", error(null, "--group-id"));
        assertEquals("unexpected argument \"oops\" (options start with --)", error(null, "oops"));
        assertTrue(
                error(
                                null,
                                "--bootstrap-servers",
                                "k",
                                "--limits",
                                tmp.resolve("none.json").toString())
                        .startsWith("--limits: cannot read " + tmp.resolve("none.json")));
        assertEquals(
                "--limits: invalid config in " + bad + ": rules: expected a non-empty array",
                error(null, "--bootstrap-servers", "k", "--limits", bad.toString()));
    }

    @Test
    void checksTheRedisMirrorAddress() throws Exception {
        String good = Files.writeString(tmp.resolve("ok.json"), VALID).toString();
        for (String uri :
                List.of(
                        "redis://localhost:6379",
                        "rediss://cache.example:6380",
                        "redis-cluster://h1:7000,h2:7001,h3:7002")) {
            JobSettings.requireJobOptions(
                    parse("--bootstrap-servers", "k", "--limits", good, "--redis", uri), true);
        }
        assertEquals(
                "--redis: expected redis://host:port, rediss://host:port,"
                        + " redis-cluster://host:port,... or rediss-cluster://... but got"
                        + " \"localhost:6379\"",
                errorWithRequired(Path.of(good), "--redis", "localhost:6379"));
        assertEquals(
                "--redis: redis-cluster:// expects host:port,host:port,... but got \"h2\"",
                errorWithRequired(Path.of(good), "--redis", "redis-cluster://h1:7000,h2"));
        assertEquals(
                "--redis-key-prefix: must be non-empty, without spaces or braces",
                errorWithRequired(Path.of(good), "--redis-key-prefix", "a{b"));
    }

    @Test
    void readsLimitsFromAFileUri() throws Exception {
        Path good = Files.writeString(tmp.resolve("ok.json"), VALID);
        io.freqcap.schema.config.LimitConfig config =
                JobSettings.requireJobOptions(
                        parse("--bootstrap-servers", "k", "--limits", good.toUri().toString()),
                        true);
        assertEquals(VALID, config.json());
    }

    @Test
    void theJobCarriesItsRocksDbTuning() throws Exception {
        var flink = FreqcapMain.flinkConfig(parse("--bootstrap-servers", "k"));
        assertEquals("rocksdb", flink.toMap().get("state.backend.type"));
        for (var e : io.freqcap.operators.capping.state.RocksDBTuning.SETTINGS.entrySet()) {
            assertEquals(e.getValue(), flink.toMap().get(e.getKey()), e.getKey());
        }
        assertEquals(
                io.freqcap.operators.capping.state.PointLookupRocksDBOptions.class.getName(),
                flink.toMap().get("state.backend.rocksdb.options-factory"));
    }

    @Test
    void helpListsEveryOption() {
        String help = CommandLine.usage("freqcap", List.of());
        for (var o : CommandLine.all()) {
            assertTrue(help.contains("--" + o.key()), o.key());
        }
        assertTrue(help.contains("[default: exactly-once]"), help);
    }

    @Test
    void transactionTimeoutMustOutlastTheCheckpointIntervalAndKafkaConfigMustBeReadable()
            throws Exception {
        Path limits = Files.writeString(tmp.resolve("limits.json"), VALID);
        assertTrue(
                errorWithRequired(
                                limits,
                                "--transaction-timeout",
                                "10s",
                                "--checkpoint-interval",
                                "10s")
                        .startsWith("--transaction-timeout: PT10S must be longer than"),
                "equal is not enough");
        assertTrue(
                errorWithRequired(limits, "--kafka-config", tmp.resolve("none").toString())
                        .startsWith("--kafka-config: cannot read"));
        Configuration ok =
                parse(
                        "--bootstrap-servers",
                        "k",
                        "--limits",
                        limits.toString(),
                        "--transaction-timeout",
                        "11s",
                        "--checkpoint-interval",
                        "10s");
        JobSettings.requireJobOptions(ok, true);
        assertEquals(Duration.ofMinutes(15), parse().get(FreqcapOptions.TRANSACTION_TIMEOUT));
    }
}
