package io.freqcap.job;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * A real single-node Kafka broker (KRaft, combined broker and controller) in this JVM, on a free
 * loopback port. For the local runner and the tests; never used by the job jar on a cluster. Its
 * version is kafka-clients' own (4.2.0): a broker of another version leaves topics leaderless.
 */
public final class EmbeddedKafka implements AutoCloseable {
    private final KafkaClusterTestKit cluster;

    private EmbeddedKafka(KafkaClusterTestKit cluster) {
        this.cluster = cluster;
    }

    public static EmbeddedKafka start() throws Exception {
        KafkaClusterTestKit cluster =
                new KafkaClusterTestKit.Builder(
                                new TestKitNodes.Builder()
                                        .setCombined(true)
                                        .setNumBrokerNodes(1)
                                        .setNumControllerNodes(1)
                                        .build())
                        .setConfigProp("offsets.topic.replication.factor", "1")
                        .setConfigProp("offsets.topic.num.partitions", "4")
                        .setConfigProp("transaction.state.log.replication.factor", "1")
                        .setConfigProp("transaction.state.log.min.isr", "1")
                        .setConfigProp("transaction.state.log.num.partitions", "4")
                        .setConfigProp("group.initial.rebalance.delay.ms", "0")
                        .setConfigProp("auto.create.topics.enable", "false")
                        .build();
        cluster.format();
        cluster.startup();
        cluster.waitForReadyBrokers();
        return new EmbeddedKafka(cluster);
    }

    public String bootstrapServers() {
        return cluster.bootstrapServers();
    }

    /** Creates topics (replication 1); topics that exist already are left as they are. */
    public void createTopics(int partitions, List<String> names) throws Exception {
        try (Admin admin = admin()) {
            for (String name : names) {
                try {
                    admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1)))
                            .all()
                            .get();
                } catch (java.util.concurrent.ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
            }
        }
    }

    public Admin admin() {
        Properties p = new Properties();
        p.putAll(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()));
        return Admin.create(p);
    }

    @Override
    public void close() throws Exception {
        cluster.close();
    }
}
