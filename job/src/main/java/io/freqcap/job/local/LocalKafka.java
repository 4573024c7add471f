package io.freqcap.job.local;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TopicExistsException;

/** A single-node Kafka broker started for the local runner, the tests or a benchmark. */
public interface LocalKafka extends AutoCloseable {
    String bootstrapServers();

    /**
     * Creates topics (replication 1); topics that exist already are left as they are. Returns once
     * the broker serves every partition of them.
     */
    default void createTopics(int partitions, List<String> names) throws Exception {
        create(names.stream().map(n -> new NewTopic(n, partitions, (short) 1)).toList());
    }

    /**
     * Creates compacted topics (the preferences topic: its latest record per user is the user's
     * choice) where they do not exist yet. Returns once the broker serves every partition of them.
     */
    default void createCompactedTopics(int partitions, List<String> names) throws Exception {
        create(
                names.stream()
                        .map(
                                n ->
                                        new NewTopic(n, partitions, (short) 1)
                                                .configs(Map.of("cleanup.policy", "compact")))
                        .toList());
    }

    private void create(List<NewTopic> topics) throws Exception {
        try (Admin admin = admin()) {
            for (NewTopic topic : topics) {
                try {
                    admin.createTopics(List.of(topic)).all().get();
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
            }
            awaitServed(admin, topics.stream().map(NewTopic::name).toList());
        }
    }

    /**
     * Waits until the broker answers for every partition of these topics. A KRaft broker lists a
     * new topic before it hosts its partitions: a client that reads them in between is told "This
     * server does not host this topic-partition" (the local runner's start failed on it now and
     * then).
     */
    private static void awaitServed(Admin admin, List<String> names) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                Map<TopicPartition, OffsetSpec> partitions = new HashMap<>();
                for (TopicDescription d :
                        admin.describeTopics(names).allTopicNames().get().values()) {
                    for (TopicPartitionInfo p : d.partitions()) {
                        partitions.put(
                                new TopicPartition(d.name(), p.partition()), OffsetSpec.latest());
                    }
                }
                admin.listOffsets(partitions).all().get();
                return;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof RetriableException) || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
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
