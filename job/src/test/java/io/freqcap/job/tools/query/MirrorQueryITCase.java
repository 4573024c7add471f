package io.freqcap.job.tools.query;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.local.EmbeddedRedis;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.mirror.MirrorLog;
import io.freqcap.schema.mirror.MirrorWrite;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code freqcap-query} against a real redis-server: windows and calendar periods of a user. */
class MirrorQueryITCase {
    @TempDir Path tmp;

    @Test
    void countsRollingWindowsAndTheCalendarPeriodsOfTheLatestMessage() throws Exception {
        ZoneId singapore = ZoneId.of("Asia/Singapore");
        long monday = at(2026, 11, 23, 9, singapore);
        LimitConfig config =
                LimitConfig.parse(
                        "{\"version\":1,\"timezone\":\"Asia/Singapore\",\"rules\":[{\"segment\":\"*\","
                                + "\"limits\":[{\"calendar\":\"day\",\"max\":2},{\"window\":\"1d\",\"max\":3}],"
                                + "\"categories\":{\"promo\":[{\"calendar\":\"week\",\"max\":2}]}}]}");
        try (EmbeddedRedis redis = EmbeddedRedis.start(tmp.resolve("redis"), false);
                RedisSync sync = RedisSync.open(redis.uri())) {
            var commands = sync.commands();
            String user = MirrorWrite.userKey("fc", 42);
            // Sunday evening, then Monday morning twice (one of them at 00:30).
            long sunday = at(2026, 11, 22, 21, singapore);
            long earlyMonday = at(2026, 11, 23, 0, singapore) + 30 * 60_000L;
            MirrorLog log = new MirrorLog();
            for (long[] m : new long[][] {{1, sunday}, {2, earlyMonday}, {3, monday}}) {
                log.add(m[1], "push", "m" + m[0]);
            }
            // As the job writes it (layout 2): the user's whole log in one key.
            commands.set(user, new String(log.encode(), StandardCharsets.UTF_8));
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            MirrorQuery.print(
                    commands,
                    "fc",
                    42,
                    MirrorQuery.windowsOf(config),
                    MirrorQuery.periodsOf(config),
                    ZoneId.of(config.timezone()),
                    new PrintStream(bytes, true, StandardCharsets.UTF_8));
            String out = bytes.toString(StandardCharsets.UTF_8);
            assertTrue(out.contains("window 1d up to the latest: all 3, push 3"), out);
            assertTrue(
                    out.contains(
                            "calendar day of the latest (2026-11-23 in Asia/Singapore): all 2"),
                    out);
            assertTrue(
                    out.contains(
                            "calendar week of the latest (2026-11-23 in Asia/Singapore): all 2"),
                    out);
            assertTrue(out.indexOf("calendar day") < out.indexOf("calendar week"), out);
            assertTrue(out.contains("push  m3"), out);
        }
    }

    static long at(int y, int mo, int d, int h, ZoneId zone) {
        return ZonedDateTime.of(y, mo, d, h, 0, 0, 0, zone).toInstant().toEpochMilli();
    }
}
