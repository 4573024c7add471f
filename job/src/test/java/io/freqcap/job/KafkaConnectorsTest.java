package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.testutils.SecuredKafka;
import io.freqcap.schema.config.ControlRecord;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the job's Kafka clients are configured with. */
class KafkaConnectorsTest {
    @TempDir Path tmp;

    KafkaSettings settings(String... extra) throws Exception {
        List<String> args =
                new java.util.ArrayList<>(
                        List.of("--bootstrap-servers", "broker:9093", "--group-id", "freqcap"));
        args.addAll(List.of(extra));
        Configuration c = CommandLine.parse(args.toArray(new String[0]), List.of());
        return KafkaSettings.of(c);
    }

    /** The properties a connector object will give its clients (read by reflection: tests only). */
    static Properties props(Object connector, String field) throws Exception {
        Class<?> type = connector.getClass();
        while (type != null) {
            try {
                Field f = type.getDeclaredField(field);
                f.setAccessible(true);
                return (Properties) f.get(connector);
            } catch (NoSuchFieldException e) {
                type = type.getSuperclass();
            }
        }
        throw new AssertionError("no field " + field);
    }

    @Test
    void kafkaConfigReachesEveryClientAndTheJobsOwnSettingsWin() throws Exception {
        List<String> lines = new ArrayList<>(SecuredKafka.SCRAM_WITH_FILE_PROVIDER);
        lines.addAll(
                List.of(
                        "sasl.jaas.config=${file:/run/secrets/kafka.properties:jaas}",
                        "bootstrap.servers=elsewhere:1",
                        "isolation.level=read_uncommitted",
                        "transaction.timeout.ms=1"));
        Path file = Files.writeString(tmp.resolve("client.properties"), String.join("\n", lines));
        KafkaSettings k = settings("--kafka-config", file.toString());
        for (Properties p :
                List.of(
                        props(KafkaConnectors.inputSource(k), "props"),
                        props(
                                KafkaConnectors.controlSource(k, ControlRecord.Kind.CONFIG),
                                "props"))) {
            assertEquals("SASL_SSL", p.getProperty("security.protocol"));
            assertEquals(
                    "${file:/run/secrets/kafka.properties:jaas}",
                    p.getProperty("sasl.jaas.config"),
                    "left for Kafka's config provider to resolve");
            assertEquals("broker:9093", p.getProperty("bootstrap.servers"));
            assertEquals("read_committed", p.getProperty("isolation.level"));
        }
        for (Object sink : List.of(KafkaConnectors.deliverySink(k), KafkaConnectors.auditSink(k))) {
            Field inner = GuardedKafkaSink.class.getDeclaredField("delegate");
            inner.setAccessible(true);
            Properties p = props(inner.get(sink), "kafkaProducerConfig");
            assertEquals("SCRAM-SHA-512", p.getProperty("sasl.mechanism"));
            assertEquals("broker:9093", p.getProperty("bootstrap.servers"));
            assertEquals(
                    "900000", p.getProperty("transaction.timeout.ms"), "--transaction-timeout");
        }
    }

    @Test
    void transactionalIdsDifferForJobsWithOneGroupIdAndOtherOutputTopics() throws Exception {
        KafkaSettings staging =
                settings(
                        "--delivery-topic", "staging-deliveries", "--audit-topic", "staging-audit");
        KafkaSettings production = settings();
        for (String sink : List.of("deliveries", "audit")) {
            assertNotEquals(
                    KafkaConnectors.transactionalIdPrefix(staging, sink),
                    KafkaConnectors.transactionalIdPrefix(production, sink));
        }
        assertEquals(
                "freqcap-deliveries@deliveries",
                KafkaConnectors.transactionalIdPrefix(production, "deliveries"));
        assertEquals(
                "freqcap-audit@capping-audit",
                KafkaConnectors.transactionalIdPrefix(production, "audit"));
        assertTrue(settings("--transaction-timeout", "2min").transactionTimeout().toMinutes() == 2);
    }
}
