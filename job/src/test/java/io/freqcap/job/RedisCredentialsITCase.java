package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import io.freqcap.job.local.EmbeddedRedis;
import io.freqcap.operators.mirror.MirrorSettings;
import io.lettuce.core.AclSetuserArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Redis credentials at start (contract.md §8) against a real redis-server with an ACL user: a
 * password holding {@code / @ + % :}, percent-encoded in {@code --redis} as RFC 3986 asks,
 * authenticates; refused credentials (a wrong password, a user who may not run the mirror's script)
 * stop the start with one line that never carries the password; a Redis merely away does not.
 */
@Timeout(120)
class RedisCredentialsITCase {
    static final String PASSWORD = "p/w@x+y%z:1";

    @TempDir Path tmp;

    static MirrorSettings mirror(String uri) {
        return MirrorSettings.of(uri, "fc", 1000, null);
    }

    static String encoded(String s) {
        // URLEncoder is form encoding: its '+' for a space is no concern here (no spaces).
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Test
    void aPasswordWithAnyCharacterAuthenticatesAndRefusedOnesStopTheStart() throws Exception {
        try (EmbeddedRedis redis =
                EmbeddedRedis.start(
                        tmp.resolve("redis"),
                        false,
                        new EmbeddedRedis.Secured("freqcap", PASSWORD, null))) {
            String at = "@127.0.0.1:" + redis.port();
            RedisPreflight.check(
                    mirror("redis://freqcap:" + encoded(PASSWORD) + at), Duration.ofSeconds(10));
            // Written raw (not as RFC 3986 asks), it works too: nothing in it looks like %XX.
            RedisPreflight.check(
                    mirror("redis://freqcap:" + PASSWORD + at), Duration.ofSeconds(10));

            for (String wrong : new String[] {"p/w@x-y%z:1", "p/w@x+y%z:2", "p/w@x_y%z:1"}) {
                String uri = "redis://freqcap:" + encoded(wrong) + at;
                InvalidOptionException e =
                        assertThrows(
                                InvalidOptionException.class,
                                () -> RedisPreflight.check(mirror(uri), Duration.ofSeconds(10)));
                String line = e.getMessage();
                assertTrue(line.contains("refused the job's credentials: WRONGPASS"), line);
                assertTrue(line.contains("redis://freqcap:***@127.0.0.1"), line);
                assertFalse(line.contains(encoded(wrong)) || line.contains(wrong), line);
                assertEquals(1, line.lines().count());
            }

            // An ACL user who may ping but not write: the mirror could write nothing.
            RedisClient admin =
                    RedisClient.create(
                            RedisURI.builder()
                                    .withHost("127.0.0.1")
                                    .withPort(redis.port())
                                    .withAuthentication("freqcap", PASSWORD)
                                    .build());
            try (var c = admin.connect()) {
                c.sync()
                        .aclSetuser(
                                "reader",
                                AclSetuserArgs.Builder.on()
                                        .addPassword("r/" + PASSWORD)
                                        .allKeys()
                                        .addCommand(io.lettuce.core.protocol.CommandType.PING)
                                        .addCommand(io.lettuce.core.protocol.CommandType.HELLO)
                                        .addCommand(io.lettuce.core.protocol.CommandType.AUTH)
                                        .addCommand(io.lettuce.core.protocol.CommandType.CLIENT));
                // One who may not SET, one who may not DEL, and one who may run exactly what
                // operations.md lists.
                c.sync().aclSetuser("no-set", mirrorUser(false, true));
                c.sync().aclSetuser("no-del", mirrorUser(true, false));
                c.sync().aclSetuser("mirror", mirrorUser(true, true));
            } finally {
                admin.shutdown();
            }
            for (String user : List.of("no-set", "no-del", "mirror")) {
                String uri = "redis://" + user + ":" + encoded("r/" + PASSWORD) + at;
                if (user.equals("mirror")) {
                    RedisPreflight.check(mirror(uri), Duration.ofSeconds(10));
                    continue;
                }
                InvalidOptionException refused =
                        assertThrows(
                                InvalidOptionException.class,
                                () -> RedisPreflight.check(mirror(uri), Duration.ofSeconds(10)));
                assertTrue(refused.getMessage().contains("NOPERM"), refused.getMessage());
            }
            InvalidOptionException e =
                    assertThrows(
                            InvalidOptionException.class,
                            () ->
                                    RedisPreflight.check(
                                            mirror(
                                                    "redis://reader:"
                                                            + encoded("r/" + PASSWORD)
                                                            + at),
                                            Duration.ofSeconds(10)));
            assertTrue(e.getMessage().contains("NOPERM"), e.getMessage());
            assertFalse(e.getMessage().contains(PASSWORD), e.getMessage());
        }
    }

    @Test
    /** The ACL of docs/operations.md (keys fc:*), or that without SET or DEL. */
    static io.lettuce.core.AclSetuserArgs mirrorUser(boolean set, boolean del) {
        var args =
                io.lettuce.core.AclSetuserArgs.Builder.on()
                        .addPassword("r/" + PASSWORD)
                        .keyPattern("fc:*")
                        .addCommand(io.lettuce.core.protocol.CommandType.HELLO)
                        .addCommand(io.lettuce.core.protocol.CommandType.AUTH)
                        .addCommand(io.lettuce.core.protocol.CommandType.CLIENT)
                        .addCommand(io.lettuce.core.protocol.CommandType.PING);
        if (set) {
            args.addCommand(io.lettuce.core.protocol.CommandType.SET);
        }
        if (del) {
            args.addCommand(io.lettuce.core.protocol.CommandType.DEL);
        }
        return args;
    }

    @Test
    void aRedisAwayAtStartOnlyDelaysTheMirror() throws Exception {
        int port = io.freqcap.job.local.LocalRunnerITCase.freePort();
        RedisPreflight.check(
                mirror("redis://freqcap:" + encoded(PASSWORD) + "@127.0.0.1:" + port),
                Duration.ofSeconds(5));
    }
}
