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
