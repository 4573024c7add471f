package io.freqcap.job.local;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;

/** A single-node Kafka broker started for the local runner, the tests or a benchmark. */
public interface LocalKafka extends AutoCloseable {
    String bootstrapServers();

    /** Creates topics (replication 1); topics that exist already are left as they are. */
    default void createTopics(int partitions, List<String> names) throws Exception {
        try (Admin admin = admin()) {
            for (String name : names) {
                try {
                    admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1)))
                            .all()
                            .get();
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
            }
        }
    }

    /**
     * Creates compacted topics (the preferences topic: its latest record per user is the user's
     * choice) where they do not exist yet.
     */
    default void createCompactedTopics(int partitions, List<String> names) throws Exception {
        try (Admin admin = admin()) {
            for (String name : names) {
                try {
                    admin.createTopics(
                                    List.of(
                                            new NewTopic(name, partitions, (short) 1)
                                                    .configs(
                                                            java.util.Map.of(
                                                                    "cleanup.policy", "compact"))))
                            .all()
                            .get();
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
            }
        }
    }

    default Admin admin() {
        Properties p = new Properties();
        p.putAll(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()));
        return Admin.create(p);
    }

    /** Broker settings for one node holding every replica. */
    static Map<String, String> singleNodeSettings() {
        return Map.of(
                "offsets.topic.replication.factor", "1",
                "offsets.topic.num.partitions", "4",
                "transaction.state.log.replication.factor", "1",
                "transaction.state.log.min.isr", "1",
                "transaction.state.log.num.partitions", "4",
                "group.initial.rebalance.delay.ms", "0",
                "auto.create.topics.enable", "false");
    }
}
