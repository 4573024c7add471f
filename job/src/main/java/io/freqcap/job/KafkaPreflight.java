package io.freqcap.job;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Checks at start that the job can use its Kafka as configured (contract.md §8): reachable, the
 * right security protocol, credentials accepted, every topic there and described, the consumer
 * groups and transactional ids allowed. Each failure is one line naming the cause, before anything
 * runs: without it, a job on a secured Kafka it cannot use stays RUNNING and decides nothing (its
 * clients retry for ever, or read TLS bytes as a response size).
 */
public final class KafkaPreflight {
    private KafkaPreflight() {}

    /** How long the check waits for Kafka at most. */
    public static final Duration TIMEOUT = Duration.ofSeconds(60);

    /**
     * @return per partition of the config topic, its end offset now: the commands before it were
     *     there before this job started, and a job that starts without state does not apply them
     *     (contract.md §7; {@code CappingSettings#commandsFrom})
     * @throws InvalidOptionException with the one line to show
     */
    public static Map<Integer, Long> check(KafkaSettings k, Duration timeout)
            throws InvalidOptionException {
        Properties p = KafkaClientConfig.properties(k.clientProperties());
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, k.bootstrapServers());
        int ms = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Integer.toString(ms));
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, Integer.toString(ms));
        String where = "Kafka at " + k.bootstrapServers();
        List<String> topics =
                new ArrayList<>(
                        List.of(
                                k.topics().input(),
                                k.topics().config(),
                                k.topics().segments(),
                                k.topics().delivery(),
                                k.topics().audit()));
        List<String> groupIds =
                new ArrayList<>(
                        List.of(k.groupId(), k.groupId() + "-config", k.groupId() + "-segment"));
        if (k.topics().preferences() != null) {
            topics.add(k.topics().preferences());
            groupIds.add(k.groupId() + "-preferences");
        }
        if (k.topics().receipts() != null) {
            topics.add(k.topics().receipts());
            groupIds.add(k.groupId() + "-receipts");
        }
        if (k.topics().held() != null) {
            topics.add(k.topics().held()); // read at a start without state, written always
        }
        try (Admin admin = Admin.create(p)) {
            admin.describeTopics(topics).allTopicNames().get(ms, TimeUnit.MILLISECONDS);
            var groups = admin.describeConsumerGroups(groupIds).describedGroups();
            for (var group : groups.values()) {
                try {
                    group.get(ms, TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof GroupIdNotFoundException)) {
                        throw e; // a group not used yet is fine; one not allowed is not
                    }
                }
            }
            Map<Integer, Long> ends = endOffsets(admin, k.topics().config(), ms);
            if (k.exactlyOnce()) {
                checkTransactionTimeout(admin, k, where, ms);
                for (String sink : List.of("deliveries", "audit")) {
                    String id = KafkaConnectors.transactionalIdPrefix(k, sink) + "-0-1";
                    try {
                        admin.describeTransactions(List.of(id))
                                .all()
                                .get(ms, TimeUnit.MILLISECONDS);
                    } catch (ExecutionException e) {
                        if (!(e.getCause() instanceof TransactionalIdNotFoundException)) {
                            throw e;
                        }
                    }
                }
            }
            return ends;
        } catch (ExecutionException e) {
            throw new InvalidOptionException(reason(where, e.getCause(), timeout));
        } catch (java.util.concurrent.TimeoutException e) {
            throw new InvalidOptionException(reason(where, new TimeoutException(""), timeout));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InvalidOptionException(where + ": interrupted while checking it");
        } catch (org.apache.kafka.common.KafkaException e) {
            // a client that cannot even be built: a bad property in --kafka-config
            throw new InvalidOptionException(
                    "--kafka-config: Kafka's client refused its settings: "
                            + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()));
        }
    }

    /** The end offset of each partition of {@code topic}. */
    private static Map<Integer, Long> endOffsets(Admin admin, String topic, int ms)
            throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
        var description =
                admin.describeTopics(List.of(topic))
                        .allTopicNames()
                        .get(ms, TimeUnit.MILLISECONDS)
                        .get(topic);
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (var p : description.partitions()) {
            latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
        }
        Map<Integer, Long> ends = new TreeMap<>();
        admin.listOffsets(latest)
                .all()
                .get(ms, TimeUnit.MILLISECONDS)
                .forEach((tp, info) -> ends.put(tp.partition(), info.offset()));
        return ends;
    }

    /**
     * A transaction timeout above the broker's {@code transaction.max.timeout.ms} fails every
     * sink's InitProducerId, and the job would restart for ever deciding nothing. Brokers that do
     * not let the job read their config (an ACL) are not checked.
     */
    private static void checkTransactionTimeout(Admin admin, KafkaSettings k, String where, int ms)
            throws InvalidOptionException, InterruptedException {
        String max;
        try {
            var node = admin.describeCluster().nodes().get(ms, TimeUnit.MILLISECONDS).iterator();
            if (!node.hasNext()) {
                return;
            }
            ConfigResource broker =
                    new ConfigResource(
                            ConfigResource.Type.BROKER, Integer.toString(node.next().id()));
            var entry =
                    admin.describeConfigs(List.of(broker))
                            .all()
                            .get(ms, TimeUnit.MILLISECONDS)
                            .get(broker)
                            .get(MAX_TRANSACTION_TIMEOUT);
            max = entry == null ? null : entry.value();
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            return; // not allowed to read it (or slow): the sinks say so if it is too low
        }
        if (max == null) {
            return;
        }
        long maxMillis = Long.parseLong(max);
        if (k.transactionTimeout().toMillis() > maxMillis) {
            throw new InvalidOptionException(
                    "--transaction-timeout "
                            + org.apache.flink.util.TimeUtils.formatWithHighestUnit(
                                    k.transactionTimeout())
                            + " is above "
                            + MAX_TRANSACTION_TIMEOUT
                            + " of "
                            + where
                            + " ("
                            + maxMillis
                            + " ms): its transactions would be refused; give at most "
                            + org.apache.flink.util.TimeUtils.formatWithHighestUnit(
                                    Duration.ofMillis(maxMillis))
                            + ", or raise the broker's limit");
        }
    }

    static final String MAX_TRANSACTION_TIMEOUT = "transaction.max.timeout.ms";

    static String reason(String where, Throwable cause, Duration timeout) {
        if (cause instanceof SslAuthenticationException) {
            return where + ": the TLS handshake failed (" + cause.getMessage() + ")";
        }
        if (cause instanceof AuthenticationException) {
            return where + " refused the credentials: " + cause.getMessage();
        }
        if (cause instanceof TopicAuthorizationException t) {
            return where
                    + ": not authorized on topics "
                    + t.unauthorizedTopics()
                    + " (an ACL is missing: docs/operations.md, Security)";
        }
        if (cause instanceof GroupAuthorizationException g) {
            return where
                    + ": not authorized on consumer group "
                    + g.groupId()
                    + " (an ACL is missing: docs/operations.md, Security)";
        }
        if (cause instanceof TransactionalIdAuthorizationException) {
            return where
                    + ": not authorized on the job's transactional ids (an ACL is missing:"
                    + " docs/operations.md, Security)";
        }
        if (cause instanceof UnknownTopicOrPartitionException) {
            return where + ": a topic does not exist (" + cause.getMessage() + ")";
        }
        if (cause instanceof TimeoutException) {
            return where
                    + " did not answer within "
                    + timeout.toSeconds()
                    + " s: unreachable, or a TLS or SASL listener reached without the settings"
                    + " it needs (--kafka-config)";
        }
        return where + ": " + cause.getClass().getSimpleName() + ": " + cause.getMessage();
    }
}
