package io.freqcap.job;

import io.freqcap.operators.capping.outputs.HeldNotices;
import io.freqcap.schema.held.HeldNotice;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.LongPredicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The held topic (contract.md §12) as a start without its notices reads it: every partition from
 * its beginning to its end, {@code read_committed}, keeping the keys whose latest record is a
 * notice. What an earlier job wrote and aborted is never read; a compacted topic has dropped most
 * of what was superseded, so this reads about one record per live key.
 */
public final class KafkaHeldTopic implements HeldNotices.LiveKeys {
    private static final long serialVersionUID = 1L;

    private final KafkaSettings kafka;

    public KafkaHeldTopic(KafkaSettings kafka) {
        this.kafka = kafka;
    }

    @Override
    public List<byte[]> read(LongPredicate ownsUser, boolean ownsOthers) {
        Set<ByteBuffer> live = new HashSet<>();
        scan(
                kafka.bootstrapServers(),
                kafka.clientProperties(),
                kafka.heldTopic(),
                (key, value) -> {
                    Long user = HeldNotice.userOf(key);
                    if (user == null ? !ownsOthers : !ownsUser.test(user)) {
                        return;
                    }
                    if (value == null) {
                        live.remove(ByteBuffer.wrap(key));
                    } else {
                        live.add(ByteBuffer.wrap(key));
                    }
                });
        List<byte[]> out = new ArrayList<>(live.size());
        for (ByteBuffer b : live) {
            out.add(b.array());
        }
        return out;
    }

    /**
     * Reads every record of {@code topic} committed now, partition by partition in offset order.
     *
     * @param clientProperties {@code --kafka-config}'s properties
     * @param visit the key and value (null for a tombstone) of each record with a key
     */
    public static void scan(
            String bootstrap,
            Map<String, String> clientProperties,
            String topic,
            BiConsumer<byte[], byte[]> visit) {
        Properties p = KafkaClientConfig.properties(clientProperties);
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(4 << 20));
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            List<TopicPartition> parts = new ArrayList<>();
            List<PartitionInfo> infos = c.partitionsFor(topic, Duration.ofMinutes(1));
            if (infos == null || infos.isEmpty()) {
                throw new IllegalStateException("held topic " + topic + " not found");
            }
            for (PartitionInfo i : infos) {
                parts.add(new TopicPartition(topic, i.partition()));
            }
            c.assign(parts);
            c.seekToBeginning(parts);
            // read_committed: the end is the last stable offset, what is committed now
            Map<TopicPartition, Long> ends = new HashMap<>(c.endOffsets(parts));
            ends.entrySet().removeIf(e -> c.position(e.getKey()) >= e.getValue());
            while (!ends.isEmpty()) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                    if (r.key() != null) {
                        visit.accept(r.key(), r.value());
                    }
                }
                ends.entrySet().removeIf(e -> c.position(e.getKey()) >= e.getValue());
            }
        }
    }
}
