package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.FreqcapOptions.Guarantee;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobSettingsTest {
    @TempDir Path tmp;

    /** The settings of a job with {@code options} and a valid config as --limits. */
    JobSettings settings(String... options) throws Exception {
        Path limits = Files.writeString(tmp.resolve("limits.json"), FreqcapOptionsTest.VALID);
        List<String> args = new ArrayList<>(List.of("--limits", limits.toString()));
        args.addAll(List.of(options));
        return JobSettings.parse(CommandLine.parse(args.toArray(new String[0]), List.of()), true);
    }

    @Test
    void optionsBecomeTypedSettingsWithTheLimitsReadOnce() throws Exception {
        JobSettings s =
                settings(
                        "--bootstrap-servers", "k:9092",
                        "--group-id", "g",
                        "--audit-topic", "a",
                        "--guarantee", "at-least-once",
                        "--max-record-bytes", "4096",
                        "--cleanup-interval", "2min",
                        "--redis", "redis://localhost:6390",
                        "--redis-key-prefix", "p");
        assertEquals("k:9092", s.kafka().bootstrapServers());
        assertEquals("g", s.kafka().groupId());
        assertEquals("a", s.kafka().topics().audit());
        assertEquals("deliveries", s.kafka().topics().delivery());
        assertEquals(Guarantee.AT_LEAST_ONCE, s.kafka().guarantee());
        assertEquals(4096, s.kafka().maxRecordBytes());
        assertEquals(4096, s.capping().bounds().maxRecordBytes());
        assertEquals(1, s.capping().initialConfig().version());
        assertNull(s.capping().initialSegmentsJson());
        assertEquals(Duration.ofMinutes(2), s.cleanupInterval());
        assertEquals(
                io.freqcap.operators.mirror.MirrorSettings.of(
                        "redis://localhost:6390", "p", 1_000_000L, null),
                s.mirror());
    }

    @Test
    void noMirrorWithoutRedis() throws Exception {
        JobSettings s = settings("--bootstrap-servers", "k");
        assertNull(s.mirror());
        assertTrue(s.kafka().exactlyOnce());
    }
}
