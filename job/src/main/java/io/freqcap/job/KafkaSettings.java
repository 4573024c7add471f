package io.freqcap.job;

import io.freqcap.job.FreqcapOptions.Guarantee;
import io.freqcap.job.FreqcapOptions.StartingOffsets;
import java.io.Serializable;
import org.apache.flink.configuration.Configuration;

/**
 * Where the job reads and writes Kafka (contract.md §2, §8), read from the options once.
 *
 * @param groupId the consumer group, and the base of the control consumers' groups and of the
 *     sinks' transactional ids
 * @param maxRecordBytes the largest record the job writes (--max-record-bytes)
 */
public record KafkaSettings(
        String bootstrapServers,
        String groupId,
        String inputTopic,
        String configTopic,
        String segmentsTopic,
        String deliveryTopic,
        String auditTopic,
        Guarantee guarantee,
        StartingOffsets startingOffsets,
        int maxRecordBytes)
        implements Serializable {

    public static KafkaSettings of(Configuration c) {
        return new KafkaSettings(
                c.get(FreqcapOptions.BOOTSTRAP_SERVERS),
                c.get(FreqcapOptions.GROUP_ID),
                c.get(FreqcapOptions.INPUT_TOPIC),
                c.get(FreqcapOptions.CONFIG_TOPIC),
                c.get(FreqcapOptions.SEGMENTS_TOPIC),
                c.get(FreqcapOptions.DELIVERY_TOPIC),
                c.get(FreqcapOptions.AUDIT_TOPIC),
                c.get(FreqcapOptions.GUARANTEE),
                c.get(FreqcapOptions.STARTING_OFFSETS),
                c.get(FreqcapOptions.MAX_RECORD_BYTES));
    }

    public boolean exactlyOnce() {
        return guarantee == Guarantee.EXACTLY_ONCE;
    }
}
