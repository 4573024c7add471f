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
import io.freqcap.schema.config.LimitConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
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
            out.add(
                    allow(
                            principal,
                            ResourceType.TOPIC,
                            group + "-" + t,
                            PatternType.LITERAL,
                            AclOperation.READ));
        }
        for (String t : List.of("deliveries", "audit")) {
            out.add(
                    allow(
                            principal,
                            ResourceType.TOPIC,
                            group + "-" + t,
                            PatternType.LITERAL,
                            AclOperation.WRITE));
            out.add(
                    allow(
                            principal,
                            ResourceType.TOPIC,
                            group + "-" + t,
                            PatternType.LITERAL,
                            AclOperation.DESCRIBE));
        }
        // The input group and the control groups (<group>-config, <group>-segment).
        out.add(
                allow(
                        principal,
                        ResourceType.GROUP,
                        group,
                        PatternType.PREFIXED,
                        AclOperation.READ));
        // The sinks' transactional ids: <group>-deliveries@..., <group>-audit@...
        out.add(
                allow(
                        principal,
                        ResourceType.TRANSACTIONAL_ID,
                        group + "-",
                        PatternType.PREFIXED,
                        AclOperation.WRITE));
        return out;
    }

    static AclBinding allow(
            String principal,
            ResourceType type,
            String name,
            PatternType pattern,
            AclOperation op) {
        return new AclBinding(
                new ResourcePattern(type, name, pattern),
                new AccessControlEntry(principal, "*", op, AclPermissionType.ALLOW));
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
        return Files.writeString(
                dir.resolve(name + ".properties"),
                String.join(
                        "\n",
                        "security.protocol=SASL_SSL",
                        "sasl.mechanism=SCRAM-SHA-512",
                        "config.providers=file",
                        "config.providers.file.class="
                                + "org.apache.kafka.common.config.provider.FileConfigProvider",
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
    }

    static Configuration options(String... extra) throws Exception {
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
        StreamExecutionEnvironment env = KafkaPipelineSupport.testEnv(options, dir);
        FreqcapMain.wireKafka(env, JobSettings.from(options, LimitConfig.parse(CONFIG), null));
        JobClient job = env.executeAsync("freqcap-secured");
        try {
            // The test writes and reads as the operator, through the broker's own listener.
            Traffic.produce(kafka.internalBootstrap(), GROUP + "-in", PARTITIONS, inputs);
            var out =
                    JobOutputs.readOutputs(
                            kafka.internalBootstrap(),
                            GROUP,
                            inputs.size(),
                            Duration.ofSeconds(150));
            var outputs =
                    JobOutputs.checkOutputs(
                            inputs,
                            out.get(GROUP + "-deliveries"),
                            out.get(GROUP + "-audit"),
                            Map.of(1L, LimitConfig.parse(CONFIG)));
            assertEquals(inputs.size(), outputs.size());
        } finally {
            KafkaPipelineSupport.cancel(job);
        }
    }
}
