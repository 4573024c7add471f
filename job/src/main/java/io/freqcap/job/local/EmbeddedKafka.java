package io.freqcap.job.local;

import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * A real single-node Kafka broker (KRaft, combined broker and controller) in this JVM, on a free
 * loopback port. For the local runner and the tests; never used by the job jar on a cluster. Its
 * version is kafka-clients' own (4.2.0): a broker of another version leaves topics leaderless.
 */
public final class EmbeddedKafka implements LocalKafka {
    private final KafkaClusterTestKit cluster;

    private EmbeddedKafka(KafkaClusterTestKit cluster) {
        this.cluster = cluster;
    }

    public static EmbeddedKafka start() throws Exception {
        KafkaClusterTestKit.Builder builder =
                new KafkaClusterTestKit.Builder(
                        new TestKitNodes.Builder()
                                .setCombined(true)
                                .setNumBrokerNodes(1)
                                .setNumControllerNodes(1)
                                .build());
        LocalKafka.singleNodeSettings().forEach(builder::setConfigProp);
        KafkaClusterTestKit cluster = builder.build();
        cluster.format();
        cluster.startup();
        cluster.waitForReadyBrokers();
        return new EmbeddedKafka(cluster);
    }

    @Override
    public String bootstrapServers() {
        return cluster.bootstrapServers();
    }

    @Override
    public void close() throws Exception {
        cluster.close();
    }
}
