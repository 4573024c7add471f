package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.local.EmbeddedRedis;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.JobOutputs.Output;
import io.freqcap.job.testutils.KafkaBroker;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.TestCertificates;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Redis mirror against a Redis that asks for credentials: an ACL user whose password comes from
 * {@code --redis-password-file}, and a TLS Redis with a password. The mirror is exact in both, as
 * without them ({@link RedisMirrorITCase}).
 */
class RedisSecurityITCase {
    static final int PARTITIONS = 2;
    static final String CONFIG = RedisMirrorITCase.CONFIG;

    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 4);

    @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

    @TempDir Path tmp;

    /** The job against a Redis that asks for credentials: the mirror exact, as without them. */
    void mirrorsExactlyTo(EmbeddedRedis redis, String name, Path passwordFile) throws Exception {
        Configuration options =
                KafkaPipelineSupport.mirroringJobOptions(
                        kafka,
                        tmp,
                        name,
                        CONFIG,
                        PARTITIONS,
                        redis.uri(),
                        "--redis-password-file",
                        passwordFile.toString());
        List<Input> inputs = Traffic.traffic(17, 3_000, 200, 10, Traffic.recent(10));
        JobClient job =
                KafkaPipelineSupport.startJob(options, tmp, CONFIG, "freqcap-redis-security-it");
        try {
            Traffic.produce(kafka.bootstrapServers(), name + "-in", PARTITIONS, inputs);
            Map<Integer, Output> outputs =
                    JobOutputs.readAndCheck(
                            kafka.bootstrapServers(),
                            name,
                            inputs,
                            CONFIG,
                            Duration.ofSeconds(120));
            assertEquals(inputs.size(), outputs.size());
            Map<String, List<String>> expected =
                    RedisMirrorITCase.expectedMirror(inputs, outputs, name);
            assertTrue(expected.size() > 100, "keys expected: " + expected.size());
            RedisMirrorITCase.awaitMirror(redis.uri(), passwordFile.toString(), name, expected);
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }

    @Test
    @Timeout(300)
    void anAclUserWithAPasswordFileMirrorsExactly() throws Exception {
        String password = "redis-" + java.util.UUID.randomUUID();
        Path file = Files.writeString(tmp.resolve("redis-password"), password + "\n");
        try (EmbeddedRedis redis =
                EmbeddedRedis.start(
                        tmp.resolve("redis-acl"),
                        false,
                        new EmbeddedRedis.Secured("freqcap", password, null))) {
            assertTrue(redis.uri().startsWith("redis://freqcap@127.0.0.1:"), redis.uri());
            // The default user is off: without the password nothing is allowed.
            assertThrows(
                    RuntimeException.class,
                    () -> RedisMirrorITCase.mirrorContent(redis.uri(), "x"));
            mirrorsExactlyTo(redis, "acl", file);
        }
    }

    @Test
    @Timeout(300)
    void aTlsRedisWithAPasswordMirrorsExactly() throws Exception {
        String password = "redis-" + java.util.UUID.randomUUID();
        Path file = Files.writeString(tmp.resolve("redis-tls-password"), password);
        TestCertificates certs = TestCertificates.create(tmp.resolve("redis-tls-certs"));
        // The job trusts Redis's certificate as a company's would: the JVM's trust store.
        Map<String, String> before = new HashMap<>();
        for (String p : List.of("trustStore", "trustStorePassword", "trustStoreType")) {
            before.put(p, System.getProperty("javax.net.ssl." + p));
        }
        System.setProperty("javax.net.ssl.trustStore", certs.truststore().toString());
        System.setProperty("javax.net.ssl.trustStorePassword", certs.password());
        System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
        try (EmbeddedRedis redis =
                EmbeddedRedis.start(
                        tmp.resolve("redis-tls"),
                        false,
                        new EmbeddedRedis.Secured(
                                "default",
                                password,
                                new EmbeddedRedis.Tls(
                                        certs.certificate(),
                                        certs.key(),
                                        certs.clientSockets())))) {
            assertTrue(redis.uri().startsWith("rediss://localhost:"), redis.uri());
            mirrorsExactlyTo(redis, "tls", file);
        } finally {
            before.forEach(
                    (p, v) -> {
                        if (v == null) {
                            System.clearProperty("javax.net.ssl." + p);
                        } else {
                            System.setProperty("javax.net.ssl." + p, v);
                        }
                    });
        }
    }
}
