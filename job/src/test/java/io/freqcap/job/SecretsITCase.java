package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.local.EmbeddedRedis;
import io.freqcap.job.local.LocalJob;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.SecuredKafka;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import io.freqcap.schema.config.LimitConfig;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.WriterAppender;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.layout.PatternLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Secrets never leave the job (contract.md §8): with a SASL password written inline in {@code
 * --kafka-config} and a Redis password inside the {@code --redis} uri (the least careful way a user
 * can give them), traffic flows, and neither password occurs in any log line (every logger at
 * INFO), in the REST API's job, exception and configuration pages, in the Prometheus scrape or in
 * any output record.
 */
class SecretsITCase {
    static final String KAFKA_PASSWORD = "kafka-secret-" + UUID.randomUUID();

    /** With each character a uri treats specially (contract.md §8), percent-encoded in the uri. */
    static final String REDIS_PASSWORD = "redis-secret/" + UUID.randomUUID() + "@x+y%z:";

    static final String GROUP = "secure";
    static final String CONFIG = Traffic.config(1, 2, 6, 1);
    static final int REST_PORT = freePort();
    static final int PROMETHEUS_PORT = freePort();

    static int freePort() {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static Configuration cluster() {
        Configuration c = new Configuration();
        c.set(RestOptions.PORT, REST_PORT);
        LocalJob.prometheus(c, Integer.toString(PROMETHEUS_PORT));
        return c;
    }

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setConfiguration(cluster())
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    @TempDir Path dir;

    static String get(HttpClient http, String url) throws Exception {
        return http.send(
                        HttpRequest.newBuilder(URI.create(url)).GET().build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    @Test
    @Timeout(300)
    void neitherPasswordOccursInLogsRestMetricsOrOutputs() throws Exception {
        StringWriter logs = new StringWriter();
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        WriterAppender appender =
                WriterAppender.newBuilder()
                        .setName("secrets")
                        .setTarget(logs)
                        .setLayout(PatternLayout.newBuilder().withPattern("%c %m %ex%n").build())
                        .build();
        appender.start();
        ctx.getConfiguration().addAppender(appender);
        ctx.getRootLogger().addAppender(ctx.getConfiguration().getAppender("secrets"));
        Level before = ctx.getRootLogger().getLevel();
        Configurator.setRootLevel(Level.INFO);
        try (SecuredKafka kafka = SecuredKafka.start(dir.resolve("broker"), KAFKA_PASSWORD);
                EmbeddedRedis redis =
                        EmbeddedRedis.start(
                                dir.resolve("redis"),
                                false,
                                new EmbeddedRedis.Secured("freqcap", REDIS_PASSWORD, null))) {
            SecuredKafkaITCase.prepare(kafka, GROUP, 2);
            Path kafkaConfig =
                    Files.writeString(
                            dir.resolve("kafka.properties"),
                            String.join(
                                    "\n",
                                    "security.protocol=SASL_SSL",
                                    "sasl.mechanism=SCRAM-SHA-512",
                                    "sasl.jaas.config=org.apache.kafka.common.security.scram."
                                            + "ScramLoginModule required username=\"freqcap\""
                                            + " password=\""
                                            + KAFKA_PASSWORD
                                            + "\";",
                                    "ssl.truststore.type=PKCS12",
                                    "ssl.truststore.location=" + kafka.truststore(),
                                    "ssl.truststore.password=" + kafka.truststorePassword(),
                                    ""));
            String redisUri =
                    "redis://freqcap:"
                            + java.net.URLEncoder.encode(
                                    REDIS_PASSWORD, java.nio.charset.StandardCharsets.UTF_8)
                            + "@127.0.0.1:"
                            + redis.port();
            Configuration options =
                    SecuredKafkaITCase.options(
                            kafka,
                            dir,
                            "--kafka-config",
                            kafkaConfig.toString(),
                            "--redis",
                            redisUri,
                            "--redis-key-prefix",
                            "sec");
            KafkaPreflight.check(KafkaSettings.of(options), Duration.ofSeconds(30));
            JobClient job = KafkaPipelineSupport.startJob(options, dir, CONFIG, "freqcap-secrets");
            List<String> seen = new ArrayList<>();
            try {
                List<Input> inputs = Traffic.traffic(41, 1_000, 100, 3);
                Traffic.produce(kafka.internalBootstrap(), GROUP + "-in", 2, inputs);
                var out =
                        JobOutputs.readOutputs(
                                kafka.internalBootstrap(),
                                GROUP,
                                inputs.size(),
                                Duration.ofSeconds(120));
                for (var records : out.values()) {
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        seen.add(new String(r.value(), StandardCharsets.UTF_8));
                        for (Header h : r.headers()) {
                            seen.add(new String(h.value(), StandardCharsets.UTF_8));
                        }
                    }
                }
                assertTrue(seen.size() >= inputs.size(), "outputs read: " + seen.size());
                RedisMirrorITCase.awaitMirror(
                        redis.uri(),
                        Files.writeString(dir.resolve("redis-pw"), REDIS_PASSWORD).toString(),
                        "sec",
                        RedisMirrorITCase.expectedMirror(
                                inputs,
                                JobOutputs.checkOutputs(
                                        inputs,
                                        out.get(GROUP + "-deliveries"),
                                        out.get(GROUP + "-audit"),
                                        java.util.Map.of(1L, LimitConfig.parse(CONFIG))),
                                "sec"));

                HttpClient http = HttpClient.newHttpClient();
                String rest = "http://localhost:" + REST_PORT;
                String id = job.getJobID().toString();
                for (String page :
                        List.of(
                                "/jobs/" + id,
                                "/jobs/" + id + "/config",
                                "/jobs/" + id + "/exceptions",
                                "/jobs/" + id + "/plan",
                                "/jobmanager/config",
                                "/jobmanager/environment",
                                "/taskmanagers")) {
                    seen.add(get(http, rest + page));
                }
                String taskmanagers = get(http, rest + "/taskmanagers");
                for (String tm :
                        io.freqcap.schema.common.Json.MAPPER
                                .readTree(taskmanagers)
                                .findValuesAsText("id")) {
                    seen.add(get(http, rest + "/taskmanagers/" + tm));
                }
                seen.add(get(http, "http://localhost:" + PROMETHEUS_PORT + "/metrics"));
            } finally {
                KafkaPipelineSupport.cancel(job);
            }
            String logText = logs.toString();
            assertTrue(logText.contains("sasl.jaas.config = [hidden]"), "Kafka's config dump seen");
            assertTrue(
                    logText.contains("Redis mirror connected to redis://freqcap:***@127.0.0.1:"),
                    "the mirror's uri shown, redacted");
            seen.add(logText);
            for (String text : seen) {
                assertFalse(
                        text.contains(KAFKA_PASSWORD),
                        "Kafka password in " + excerpt(text, KAFKA_PASSWORD));
                assertFalse(
                        text.contains(REDIS_PASSWORD),
                        "Redis password in " + excerpt(text, REDIS_PASSWORD));
                // Its secret middle, however it is written (raw, encoded, cut at a '/').
                String uuid = REDIS_PASSWORD.substring(13, 49);
                assertFalse(text.contains(uuid), "Redis password in " + excerpt(text, uuid));
            }
        } finally {
            ctx.getRootLogger().removeAppender(appender);
            appender.stop();
            Configurator.setRootLevel(before);
        }
    }

    static String excerpt(String text, String secret) {
        int i = text.indexOf(secret);
        return text.substring(Math.max(0, i - 200), Math.min(text.length(), i + 50));
    }
}
