package io.freqcap.job;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
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
     * @throws InvalidOptionException with the one line to show
     */
    public static void check(KafkaSettings k, Duration timeout) throws InvalidOptionException {
        Properties p = KafkaClientConfig.properties(k.clientProperties());
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, k.bootstrapServers());
        int ms = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Integer.toString(ms));
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, Integer.toString(ms));
        String where = "Kafka at " + k.bootstrapServers();
        List<String> topics =
                List.of(
                        k.inputTopic(),
                        k.configTopic(),
                        k.segmentsTopic(),
                        k.deliveryTopic(),
                        k.auditTopic());
        try (Admin admin = Admin.create(p)) {
            admin.describeTopics(topics).allTopicNames().get(ms, TimeUnit.MILLISECONDS);
            var groups =
                    admin.describeConsumerGroups(
                                    List.of(
                                            k.groupId(),
                                            k.groupId() + "-config",
                                            k.groupId() + "-segment"))
                            .describedGroups();
            for (var group : groups.values()) {
                try {
                    group.get(ms, TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof GroupIdNotFoundException)) {
                        throw e; // a group not used yet is fine; one not allowed is not
                    }
                }
            }
            if (k.exactlyOnce()) {
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
