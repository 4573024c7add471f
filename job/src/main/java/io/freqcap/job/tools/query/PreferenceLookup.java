package io.freqcap.job.tools.query;

import io.freqcap.job.KafkaClientConfig;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.preference.PreferenceRecord;
import io.freqcap.schema.preference.UserPreferences;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * For {@code freqcap-query --preferences-topic}: a user's preferences in force as the job reads
 * them from the preferences topic (contract.md §10), where they live; the job keeps them in its
 * state, never in Redis. Reads the topic from its beginning to its end offsets (read_committed): on
 * a compacted topic that is about one record per user.
 */
final class PreferenceLookup {
    private PreferenceLookup() {}

    /** What the topic says of one user: its preferences, or null; and how many records named it. */
    record Found(UserPreferences preferences, String json, int records, int unreadable) {}

    static Found read(Properties client, String topic, long user) {
        Properties p = new Properties();
        p.putAll(client);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        KafkaClientConfig.readBytes(p);
        List<byte[][]> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> partitions = new ArrayList<>();
            consumer.partitionsFor(topic)
                    .forEach(i -> partitions.add(new TopicPartition(topic, i.partition())));
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    records.add(new byte[][] {r.key(), r.value()});
                }
            }
        }
        return fold(records, user);
    }

    /**
     * The user's preferences after these records (key, value) in topic order, as the job applies
     * them: a higher version replaces, a tombstone clears, an unreadable record changes nothing.
     */
    static Found fold(List<byte[][]> records, long user) {
        UserPreferences in = null;
        String json = null;
        int named = 0;
        int unreadable = 0;
        for (byte[][] r : records) {
            PreferenceRecord rec;
            try {
                rec = PreferenceRecord.read(r[0], r[1]);
            } catch (MalformedRecordException e) {
                unreadable++;
                continue;
            }
            if (rec.userId() != user) {
                continue;
            }
            named++;
            if (rec instanceof PreferenceRecord.Clear) {
                in = null;
                json = null;
            } else {
                UserPreferences p = ((PreferenceRecord.Update) rec).preferences();
                if (in == null || p.version() > in.version()) {
                    in = p;
                    json = new String(r[1], StandardCharsets.UTF_8);
                }
            }
        }
        return new Found(in, json, named, unreadable);
    }
}
