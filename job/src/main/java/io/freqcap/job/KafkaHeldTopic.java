package io.freqcap.job;

import io.freqcap.operators.capping.outputs.HeldNotices;
import io.freqcap.schema.held.HeldNotice;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.BiConsumer;
import java.util.function.LongPredicate;
import java.util.function.Predicate;
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
    private static final org.slf4j.Logger LOG =
            org.slf4j.LoggerFactory.getLogger(KafkaHeldTopic.class);

    private final KafkaSettings kafka;

    public KafkaHeldTopic(KafkaSettings kafka) {
        this.kafka = kafka;
    }

    @Override
    public boolean transactional() {
        return kafka.exactlyOnce();
    }

    @Override
    public List<byte[]> read(LongPredicate ownsUser, boolean ownsOthers, boolean waitForOpen) {
        List<byte[]> out = new ArrayList<>();
        live(
                        kafka.bootstrapServers(),
                        kafka.clientProperties(),
                        kafka.heldTopic(),
                        waitForOpen ? WAIT_FOR_OPEN : Duration.ZERO,
                        key -> {
                            Long user = HeldNotice.userOf(key);
                            return user == null ? ownsOthers : ownsUser.test(user);
                        })
                .forEach((key, value) -> out.add(key.array()));
        return out;
    }

    /**
     * The topic's live records now, as a compacted topic keeps them: each key's latest value, keys
     * whose latest record is a tombstone left out, in the order first read.
     *
     * @param keep which keys to keep (the others are not kept in memory)
     * @see #scan
     */
    public static Map<ByteBuffer, byte[]> live(
            String bootstrap,
            Map<String, String> clientProperties,
            String topic,
            Duration waitForOpen,
            Predicate<byte[]> keep) {
        Map<ByteBuffer, byte[]> live = new LinkedHashMap<>();
        scan(
                bootstrap,
                clientProperties,
                topic,
                waitForOpen,
                (key, value) -> {
                    if (!keep.test(key)) {
                        return;
                    }
                    if (value == null) {
                        live.remove(ByteBuffer.wrap(key));
                    } else {
                        live.put(ByteBuffer.wrap(key), value);
                    }
                });
        return live;
    }

    /**
     * How long a start waits for transactions still open on the topic (a previous run's, until its
     * sinks abort or commit them at their start): after that it reads what is committed.
     */
    static final Duration WAIT_FOR_OPEN = Duration.ofSeconds(15);

    /** How long a scan may go without reading on before it gives up (no leader, say). */
    static final Duration GIVE_UP = Duration.ofMinutes(3);

    /**
     * Reads every record of {@code topic} committed now, partition by partition in offset order.
     *
     * <p>{@code read_committed} reads up to the last stable offset: a transaction still open holds
     * back every record after it, committed or not. With {@code waitForOpen}, the scan reads on to
     * the end of the log as it was when the scan began, for as long as that takes transactions open
     * then to end; after it, to the last stable offset (logged: records of the transactions still
     * open are not read, normally the running job's own).
     *
     * @param clientProperties {@code --kafka-config}'s properties
     * @param waitForOpen how long to wait for open transactions; zero to read what is committed
     * @param visit the key and value (null for a tombstone) of each record with a key
     * @throws IllegalStateException when the topic is absent or its reading makes no progress for
     *     {@link #GIVE_UP}
     */
    public static void scan(
            String bootstrap,
            Map<String, String> clientProperties,
            String topic,
            Duration waitForOpen,
            BiConsumer<byte[], byte[]> visit) {
        Properties p = KafkaClientConfig.properties(clientProperties);
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        // Where the log's start moves on during the scan (retention), read on from there.
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(4 << 20));
        Properties uncommitted = new Properties();
        uncommitted.putAll(p);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        uncommitted.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        long start = System.nanoTime();
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
            Map<TopicPartition, Long> ends;
            if (waitForOpen.isZero()) {
                ends = new HashMap<>(c.endOffsets(parts)); // the last stable offsets
            } else {
                try (KafkaConsumer<byte[], byte[]> all = new KafkaConsumer<>(uncommitted)) {
                    ends = new HashMap<>(all.endOffsets(parts)); // the log's ends
                }
            }
            boolean waiting = !waitForOpen.isZero();
            ends.entrySet().removeIf(e -> c.position(e.getKey()) >= e.getValue());
            long read = 0;
            long progressAt = start;
            while (!ends.isEmpty()) {
                long now = System.nanoTime();
                long elapsed = now - start;
                if (waiting && elapsed > waitForOpen.toNanos()) {
                    waiting = false;
                    Map<TopicPartition, Long> stable = c.endOffsets(ends.keySet());
                    LOG.warn(
                            "held topic {}: transactions still open after {} s on partitions {};"
                                    + " reading what is committed (to {})",
                            topic,
                            waitForOpen.toSeconds(),
                            ends.keySet(),
                            stable);
                    ends.replaceAll((tp, end) -> Math.min(end, stable.get(tp)));
                }
                if (now - progressAt > GIVE_UP.toNanos()) {
                    throw new IllegalStateException(
                            "held topic "
                                    + topic
                                    + ": could not read partitions "
                                    + ends.keySet()
                                    + ": no progress for "
                                    + GIVE_UP.toMinutes()
                                    + " minutes");
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    if (r.key() != null) {
                        visit.accept(r.key(), r.value());
                    }
                }
                long position = 0;
                for (TopicPartition tp : ends.keySet()) {
                    position += c.position(tp);
                }
                if (position != read) {
                    read = position;
                    progressAt = System.nanoTime();
                }
                ends.entrySet().removeIf(e -> c.position(e.getKey()) >= e.getValue());
            }
        }
    }
}
