package io.freqcap.operators.mirror;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisURI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Redis addresses: credentials and TLS read as users write them, and never shown. */
class RedisConnectionTest {
    @TempDir Path tmp;

    @Test
    void aPasswordIsNeverShown() {
        assertEquals("redis://:***@h:6379", RedisConnection.redact("redis://:s3cr3t@h:6379"));
        assertEquals(
                "rediss://app:***@h:6380/0",
                RedisConnection.redact("rediss://app:s3cr3t@h:6380/0"));
        assertEquals(
                "redis-cluster://app:***@a:1,b:2",
                RedisConnection.redact("redis-cluster://app:s3cr3t@a:1,b:2"));
        assertEquals("redis://h:6379", RedisConnection.redact("redis://h:6379"));
        MirrorSettings settings = new MirrorSettings("redis://:s3cr3t@h:1", "fc", 1, 1, 1);
        assertFalse(settings.toString().contains("s3cr3t"), settings.toString());
        for (String bad : List.of("http://:s3cr3t@h:1", "redis-cluster://u:s3cr3t@a", "")) {
            String error =
                    assertThrows(IllegalArgumentException.class, () -> RedisConnection.parse(bad))
                            .getMessage();
            assertFalse(error.contains("s3cr3t"), error);
        }
    }

    @Test
    void userAndPasswordComeFromTheUriOrThePasswordFile() throws Exception {
        RedisURI both = RedisConnection.parse("redis://app:s3cr3t@h:6379").get(0);
        assertEquals("app", both.getUsername());
        assertArrayEquals("s3cr3t".toCharArray(), both.getPassword());
        assertEquals("h", both.getHost());

        RedisURI passwordOnly = RedisConnection.parse("redis://:s3cr3t@h:6379").get(0);
        assertNull(passwordOnly.getUsername());
        assertArrayEquals("s3cr3t".toCharArray(), passwordOnly.getPassword());

        Path file = Files.writeString(tmp.resolve("pw"), "from-file\n");
        RedisURI acl =
                RedisConnection.parse(
                                "redis://app@h:6379", RedisConnection.readPassword(file.toString()))
                        .get(0);
        assertEquals("app", acl.getUsername(), "a user name alone is an ACL user, not a password");
        assertArrayEquals("from-file".toCharArray(), acl.getPassword());
        assertThrows(
                IllegalArgumentException.class,
                () -> RedisConnection.readPassword(tmp.resolve("missing").toString()));
    }

    /**
     * Contract v4 §8: a password with {@code /}, {@code @}, {@code +}, {@code %} or {@code :},
     * percent-encoded as RFC 3986 asks or (for all but {@code %XX} look-alikes) raw, reaches Redis
     * as it is and is never shown. Before: a {@code /} cut the address where the password was, and
     * the error quoted it; a percent-encoded {@code +} was read as a space.
     */
    @Test
    void passwordsWithAnyCharacterAuthenticateAndAreNeverShown() {
        String[][] cases = {
            // password, as written in the uri
            {"a/b", "a%2Fb"},
            {"a/b", "a/b"},
            {"a@b", "a%40b"},
            {"a@b", "a@b"},
            {"a+b", "a%2Bb"},
            {"a+b", "a+b"},
            {"a%b", "a%25b"},
            {"a%b", "a%b"},
            {"a:b", "a%3Ab"},
            {"a:b", "a:b"},
            {"p/w@x+y%z:ä", "p%2Fw%40x%2By%25z%3A%C3%A4"},
        };
        for (String[] c : cases) {
            for (String uri :
                    List.of(
                            "redis://app:" + c[1] + "@h:6379",
                            "rediss://app:" + c[1] + "@h:6379/0",
                            "redis-cluster://app:" + c[1] + "@a:7000,b:7001")) {
                for (RedisURI u : RedisConnection.parse(uri)) {
                    assertEquals("app", u.getUsername(), uri);
                    assertArrayEquals(c[0].toCharArray(), u.getPassword(), uri);
                    assertTrue(u.getHost().equals("h") || u.getHost().length() == 1, uri);
                }
                String shown = RedisConnection.redact(uri);
                assertTrue(shown.contains("app:***@"), shown);
                assertFalse(shown.contains(c[1]) || shown.contains(c[0]), shown);
            }
            for (String bad :
                    List.of(
                            "http://app:" + c[1] + "@h:1",
                            "redis-cluster://app:" + c[1] + "@a",
                            "redis://app:" + c[1] + "@")) {
                String error =
                        assertThrows(
                                        IllegalArgumentException.class,
                                        () -> RedisConnection.parse(bad),
                                        bad)
                                .getMessage();
                assertFalse(error.contains(c[1]) || error.contains(c[0]), error);
            }
        }
    }

    @Test
    void clustersTakeCredentialsAndTls() {
        List<RedisURI> nodes = RedisConnection.parse("rediss-cluster://app:s3cr3t@a:7000,b:7001");
        assertEquals(2, nodes.size());
        for (RedisURI n : nodes) {
            assertTrue(n.isSsl());
            assertEquals("app", n.getUsername());
            assertArrayEquals("s3cr3t".toCharArray(), n.getPassword());
        }
        assertFalse(RedisConnection.parse("redis-cluster://a:7000").get(0).isSsl());
        assertTrue(RedisConnection.isCluster("rediss-cluster://a:1"));
    }
}
