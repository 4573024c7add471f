package io.freqcap.job.testutils;

import io.freqcap.job.local.KafkaBrokerProcess;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

/**
 * A Kafka broker as a company runs one: KRaft in a JVM of its own, its client listener SASL_SSL
 * only (SCRAM-SHA-512 over TLS, with a certificate made here by the JDK's keytool), the standard
 * authorizer on and nothing allowed without an ACL. A second, PLAINTEXT listener on loopback is the
 * operator's: the broker's own traffic and the test's setup (topics, ACLs, traffic, reading the
 * outputs) go through it as a super user. The job is only ever given the client listener.
 */
public final class SecuredKafka implements AutoCloseable {
    public static final String USER = "freqcap";

    /**
     * The first lines of a client's properties for this broker's listener: SCRAM-SHA-512 over TLS,
     * with Kafka's file config provider to read the secrets that follow from files of their own.
     */
    public static final List<String> SCRAM_WITH_FILE_PROVIDER =
            List.of(
                    "security.protocol=SASL_SSL",
                    "sasl.mechanism=SCRAM-SHA-512",
                    "config.providers=file",
                    "config.providers.file.class="
                            + "org.apache.kafka.common.config.provider.FileConfigProvider");

    private final Process process;
    private final Path dir;
    private final int clientPort;
    private final int internalPort;
    private final TestCertificates certs;

    private SecuredKafka(
            Process process, Path dir, int clientPort, int internalPort, TestCertificates certs) {
        this.process = process;
        this.dir = dir;
        this.clientPort = clientPort;
        this.internalPort = internalPort;
        this.certs = certs;
    }

    /**
     * Starts a broker under {@code dir} on which {@link #USER} has SCRAM password {@code password}.
     */
    public static SecuredKafka start(Path dir, String password) throws Exception {
        Files.createDirectories(dir);
        TestCertificates certs = TestCertificates.create(dir.resolve("tls"));
        String storePassword = certs.password();
        Path keystore = certs.keystore();
        int clientPort = freePort();
        int internalPort = freePort();
        int controllerPort = freePort();
        Map<String, String> p = new TreeMap<>();
        p.put("process.roles", "broker,controller");
        p.put("node.id", "1");
        p.put("controller.quorum.voters", "1@localhost:" + controllerPort);
        p.put(
                "listeners",
                "CLIENT://localhost:"
                        + clientPort
                        + ",INTERNAL://localhost:"
                        + internalPort
                        + ",CONTROLLER://localhost:"
                        + controllerPort);
        p.put(
                "advertised.listeners",
                "CLIENT://localhost:" + clientPort + ",INTERNAL://localhost:" + internalPort);
        p.put("controller.listener.names", "CONTROLLER");
        p.put(
                "listener.security.protocol.map",
                "CLIENT:SASL_SSL,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.put("inter.broker.listener.name", "INTERNAL");
        p.put("sasl.enabled.mechanisms", "SCRAM-SHA-512");
        p.put("listener.name.client.sasl.enabled.mechanisms", "SCRAM-SHA-512");
        p.put(
                "listener.name.client.scram-sha-512.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required;");
        p.put("listener.name.client.ssl.keystore.type", "PKCS12");
        p.put("listener.name.client.ssl.keystore.location", keystore.toString());
        p.put("listener.name.client.ssl.keystore.password", storePassword);
        p.put("listener.name.client.ssl.key.password", storePassword);
        p.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
        p.put("super.users", "User:ANONYMOUS");
        p.put("allow.everyone.if.no.acl.found", "false");
        p.putAll(io.freqcap.job.local.LocalKafka.singleNodeSettings());
        p.put("log.dirs", dir.resolve("data").toString());
        Path config = KafkaBrokerProcess.writeConfig(dir, p, "INFO");
        Path log4j = dir.resolve("log4j2.properties");
        int formatted =
                KafkaBrokerProcess.java(
                                "512m",
                                log4j,
                                List.of(
                                        "kafka.tools.StorageTool",
                                        "format",
                                        "-t",
                                        Uuid.randomUuid().toString(),
                                        "-c",
                                        config.toString(),
                                        "--add-scram",
                                        "SCRAM-SHA-512=[name="
                                                + USER
                                                + ",password="
                                                + password
                                                + "]"),
                                dir.resolve("format.log"))
                        .waitFor();
        if (formatted != 0) {
            throw new IOException("format failed: " + Files.readString(dir.resolve("format.log")));
        }
        Process process =
                KafkaBrokerProcess.java(
                        "512m",
                        log4j,
                        List.of("kafka.Kafka", config.toString()),
                        dir.resolve("out.log"));
        SecuredKafka k = new SecuredKafka(process, dir, clientPort, internalPort, certs);
        k.awaitReady();
        return k;
    }

    /** The SASL_SSL listener: what the job is given. */
    public String clientBootstrap() {
        return "localhost:" + clientPort;
    }

    /** The operator's PLAINTEXT listener (super user): the test's setup and checks. */
    public String internalBootstrap() {
        return "localhost:" + internalPort;
    }

    public Path truststore() {
        return certs.truststore();
    }

    public String truststorePassword() {
        return certs.password();
    }

    public Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, internalBootstrap());
        return Admin.create(p);
    }

    private void awaitReady() throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("broker exited: " + Files.readString(dir.resolve("out.log")));
            }
            try (Admin a = admin()) {
                if (!a.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
                    return;
                }
            } catch (Exception notYet) {
                Thread.sleep(200);
            }
        }
        throw new IOException("broker not ready within a minute");
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }
}
