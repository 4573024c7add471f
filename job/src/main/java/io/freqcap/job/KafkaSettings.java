package io.freqcap.job;

import io.freqcap.job.FreqcapOptions.Guarantee;
import io.freqcap.job.FreqcapOptions.StartingOffsets;
import java.io.Serializable;
import java.time.Duration;
import java.util.Map;
import org.apache.flink.configuration.Configuration;

/**
 * Where the job reads and writes Kafka (contract.md §2, §8), read from the options once.
 *
 * @param groupId the consumer group, and the base of the control consumers' groups and of the
 *     sinks' transactional ids
 * @param topics the topics it reads and writes
 * @param maxRecordBytes the largest record the job writes (--max-record-bytes)
 * @param clientProperties {@code --kafka-config}'s properties, applied to every client first
 * @param transactionTimeout the Kafka transactions' timeout (--transaction-timeout)
 */
public record KafkaSettings(
        String bootstrapServers,
        String groupId,
        Topics topics,
        Guarantee guarantee,
        StartingOffsets startingOffsets,
        int maxRecordBytes,
        Map<String, String> clientProperties,
        Duration transactionTimeout)
        implements Serializable {

    /**
     * The job's topics (contract.md §2, §8).
     *
     * @param preferences --preferences-topic, or null
     * @param receipts --receipts-topic, or null
     * @param held --held-topic, or null
     */
    public record Topics(
            String input,
            String config,
            String segments,
            String delivery,
            String audit,
            String preferences,
            String receipts,
            String held)
            implements Serializable {}

    public static KafkaSettings of(Configuration c) {
        return new KafkaSettings(
                c.get(FreqcapOptions.BOOTSTRAP_SERVERS),
                c.get(FreqcapOptions.GROUP_ID),
                new Topics(
                        c.get(FreqcapOptions.INPUT_TOPIC),
                        c.get(FreqcapOptions.CONFIG_TOPIC),
                        c.get(FreqcapOptions.SEGMENTS_TOPIC),
                        c.get(FreqcapOptions.DELIVERY_TOPIC),
                        c.get(FreqcapOptions.AUDIT_TOPIC),
                        c.getOptional(FreqcapOptions.PREFERENCES_TOPIC).orElse(null),
                        c.getOptional(FreqcapOptions.RECEIPTS_TOPIC).orElse(null),
                        c.getOptional(FreqcapOptions.HELD_TOPIC).orElse(null)),
                c.get(FreqcapOptions.GUARANTEE),
                c.get(FreqcapOptions.STARTING_OFFSETS),
                c.get(FreqcapOptions.MAX_RECORD_BYTES),
                clientProperties(c),
                c.get(FreqcapOptions.TRANSACTION_TIMEOUT));
    }

    /** The properties of {@code --kafka-config}, none without it; the file was checked at start. */
    public static Map<String, String> clientProperties(Configuration options) {
        return options.getOptional(FreqcapOptions.KAFKA_CONFIG)
                .map(
                        f -> {
                            try {
                                return Map.copyOf(KafkaClientConfig.read(java.nio.file.Path.of(f)));
                            } catch (java.io.IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        })
                .orElse(Map.of());
    }

    public boolean exactlyOnce() {
        return guarantee == Guarantee.EXACTLY_ONCE;
    }
}
