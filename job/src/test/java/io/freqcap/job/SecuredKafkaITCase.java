package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import io.freqcap.job.testutils.JobOutputs;
import io.freqcap.job.testutils.KafkaPipelineSupport;
import io.freqcap.job.testutils.SecuredKafka;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.job.testutils.Traffic.Input;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job on a Kafka that requires SASL_SSL (SCRAM-SHA-512 over TLS) and ACLs, granted to the job's
 * principal exactly as docs/operations.md (Security) lists them: with {@code --kafka-config} it
 * decides a known input exactly, its password read through Kafka's file config provider; without
 * it, or with a wrong password, or without an ACL, the start stops with one line naming the cause.
 */
class SecuredKafkaITCase {
    static final String GROUP = "secure";
    static final String PASSWORD = "kafka-" + UUID.randomUUID();
    static final int PARTITIONS = 2;
    static final String CONFIG = Traffic.config(1, 2, 6, 1);

    @RegisterExtension
    static final MiniClusterExtension FLINK = KafkaPipelineSupport.miniCluster(1, 4);

    @TempDir static Path dir;
    static SecuredKafka kafka;

    @BeforeAll
    static void start() throws Exception {
        kafka = SecuredKafka.start(dir.resolve("broker"), PASSWORD);
        prepare(kafka, GROUP, PARTITIONS);
    }

    /**
     * Creates a job's topics (named after {@code group}, as {@link KafkaPipelineSupport#args} names
     * them) and grants the job's principal the ACLs of docs/operations.md.
     */
    static void prepare(SecuredKafka kafka, String group, int partitions) throws Exception {
        try (Admin admin = kafka.admin()) {
            List<NewTopic> topics = new ArrayList<>();
            for (String t : List.of("in", "deliveries", "audit")) {
                topics.add(new NewTopic(group + "-" + t, partitions, (short) 1));
            }
            for (String t : List.of("config", "segments")) {
                topics.add(new NewTopic(group + "-" + t, 1, (short) 1));
            }
            admin.createTopics(topics).all().get();
            admin.createAcls(acls("User:" + SecuredKafka.USER, group)).all().get();
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (kafka != null) {
            kafka.close();
        }
    }

    /** The ACLs of docs/operations.md (Security), for a job whose topics and group are named. */
    static List<AclBinding> acls(String principal, String group) {
        List<AclBinding> out = new ArrayList<>();
        for (String t : List.of("in", "config", "segments")) {
            out.add(allow(principal, topic(group + "-" + t), AclOperation.READ));
        }
        for (String t : List.of("deliveries", "audit")) {
            out.add(allow(principal, topic(group + "-" + t), AclOperation.WRITE));
            out.add(allow(principal, topic(group + "-" + t), AclOperation.DESCRIBE));
        }
        // The input group and the control groups (<group>-config, <group>-segment).
        out.add(allow(principal, prefixed(ResourceType.GROUP, group), AclOperation.READ));
        // The sinks' transactional ids: <group>-deliveries@..., <group>-audit@...
        out.add(
                allow(
                        principal,
                        prefixed(ResourceType.TRANSACTIONAL_ID, group + "-"),
                        AclOperation.WRITE));
        return out;
    }

    static ResourcePattern topic(String name) {
        return new ResourcePattern(ResourceType.TOPIC, name, PatternType.LITERAL);
    }

    static ResourcePattern prefixed(ResourceType type, String prefix) {
        return new ResourcePattern(type, prefix, PatternType.PREFIXED);
    }

    static AclBinding allow(String principal, ResourcePattern resource, AclOperation op) {
        return new AclBinding(
                resource, new AccessControlEntry(principal, "*", op, AclPermissionType.ALLOW));
    }

    /** A client properties file whose secrets stay in another file, read by Kafka's provider. */
    static Path kafkaConfig(String name, String password) throws Exception {
        Path secrets =
                Files.writeString(
                        dir.resolve(name + "-secrets.properties"),
                        "password="
                                + password
                                + "\ntruststore="
                                + kafka.truststorePassword()
                                + "\n");
        List<String> lines = new ArrayList<>(SecuredKafka.SCRAM_WITH_FILE_PROVIDER);
        lines.addAll(
                List.of(
                        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule"
                                + " required username=\""
                                + SecuredKafka.USER
                                + "\" password=\"${file:"
                                + secrets
                                + ":password}\";",
                        "ssl.truststore.type=PKCS12",
                        "ssl.truststore.location=" + kafka.truststore(),
                        "ssl.truststore.password=${file:" + secrets + ":truststore}",
                        ""));
        return Files.writeString(dir.resolve(name + ".properties"), String.join("\n", lines));
    }

    static Configuration options(String... extra) throws Exception {
        return options(kafka, dir, extra);
    }

    /**
     * The checked options of a job of {@link #GROUP} on {@code kafka}, its config written under
     * {@code dir}, plus {@code extra}.
     */
    static Configuration options(SecuredKafka kafka, Path dir, String... extra) throws Exception {
        Path limits = Files.writeString(dir.resolve("limits.json"), CONFIG);
        List<String> args =
                new ArrayList<>(KafkaPipelineSupport.args(kafka.clientBootstrap(), GROUP, limits));
        args.addAll(List.of(extra));
        Configuration c = CommandLine.parse(args.toArray(new String[0]), List.of());
        JobSettings.requireJobOptions(c, true);
        return c;
    }

    static String preflightError(Configuration options) {
        return assertThrows(
                        InvalidOptionException.class,
                        () ->
                                KafkaPreflight.check(
                                        KafkaSettings.of(options), Duration.ofSeconds(15)))
                .getMessage();
    }

    @Test
    @Timeout(120)
    void withoutSettingsOrWithAWrongPasswordTheStartStopsWithOneLine() throws Exception {
        long t0 = System.nanoTime();
        String noTls = preflightError(options());
        assertTrue(
                noTls.startsWith(
                        "Kafka at " + kafka.clientBootstrap() + " did not answer within 15 s"),
                noTls);
        String wrong =
                preflightError(
                        options(
                                "--kafka-config",
                                kafkaConfig("wrong", "not-" + PASSWORD).toString()));
        assertTrue(wrong.contains("refused the credentials"), wrong);
        assertTrue(!wrong.contains(PASSWORD), "no secret in the line");
        String wrongGroup =
                preflightError(
                        options(
                                "--kafka-config",
                                kafkaConfig("right", PASSWORD).toString(),
                                "--group-id",
                                "other"));
        assertTrue(wrongGroup.contains("not authorized"), wrongGroup);
        assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(90).toNanos());
    }

    @Test
    @Timeout(240)
    void withKafkaConfigTheJobDecidesAKnownInputExactly() throws Exception {
        Configuration options =
                options("--kafka-config", kafkaConfig("right", PASSWORD).toString());
        KafkaPreflight.check(KafkaSettings.of(options), Duration.ofSeconds(30));

        List<Input> inputs = Traffic.traffic(7, 3_000, 200, 5);
        JobClient job = KafkaPipelineSupport.startJob(options, dir, CONFIG, "freqcap-secured");
        try {
            // The test writes and reads as the operator, through the broker's own listener.
            Traffic.produce(kafka.internalBootstrap(), GROUP + "-in", PARTITIONS, inputs);
            var outputs =
                    JobOutputs.readAndCheck(
                            kafka.internalBootstrap(),
                            GROUP,
                            inputs,
                            CONFIG,
                            Duration.ofSeconds(150));
            assertEquals(inputs.size(), outputs.size());
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }
}
