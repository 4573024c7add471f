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
import java.util.function.Function;
import java.util.function.LongPredicate;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * The held topic (contract.md §12) as a start reads it: every partition from its beginning to its
 * last stable offset, {@code read_committed}, keeping only the keys the task owns whose latest
 * record is a notice (keys only: a start's memory is bounded by the keys it owns, not by the
 * topic). What an earlier job wrote and aborted is never read; a compacted topic has dropped most
 * of what was superseded, so this reads about one record per live key.
 *
 * <p>A start never waits for a transaction open on the topic: where one holds the last stable
 * offset back from the log's end, a thread of the task reads on, {@code read_committed}, from there
 * to the log's end as it was at the start, for as long as those transactions take to end (up to the
 * transaction timeout of whoever opened them), and hands the task the keys it owns that they
 * committed ({@link Follow}).
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
    public HeldNotices.Start read(LongPredicate ownsUser, boolean ownsOthers) {
        Predicate<byte[]> mine =
                key -> {
                    Long user = HeldNotice.userOf(key);
                    return user == null ? ownsOthers : ownsUser.test(user);
                };
        String topic = kafka.topics().held();
        Properties committed = consumer(kafka.bootstrapServers(), kafka.clientProperties(), true);
        Map<TopicPartition, Long> stable;
        Map<TopicPartition, Long> ends;
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(committed);
                KafkaConsumer<byte[], byte[]> all =
                        new KafkaConsumer<>(
                                consumer(
                                        kafka.bootstrapServers(),
                                        kafka.clientProperties(),
                                        false))) {
            List<TopicPartition> parts = partitions(c, topic);
            ends = new HashMap<>(all.endOffsets(parts)); // the log's ends
            stable = new HashMap<>(c.endOffsets(parts)); // the last stable offsets
        }
        // Only the keys: a start may find millions of held messages.
        java.util.Set<ByteBuffer> live =
                latest(
                                kafka.bootstrapServers(),
                                kafka.clientProperties(),
                                topic,
                                Duration.ZERO,
                                mine,
                                value -> Boolean.TRUE)
                        .keySet();
        List<byte[]> keys = new ArrayList<>(live.size());
        live.forEach(k -> keys.add(k.array()));
        Map<TopicPartition, Long> open = new HashMap<>();
        stable.forEach(
                (tp, at) -> {
                    if (at < ends.get(tp)) {
                        open.put(tp, at);
                    }
                });
        if (open.isEmpty()) {
            return HeldNotices.Start.of(keys);
        }
        LOG.info(
                "held topic {}: transactions open at the start on {}; reading on, in the"
                        + " background, what they commit (up to {})",
                topic,
                open.keySet(),
                ends);
        Follow follow = new Follow(committed, open, ends, mine);
        follow.start();
        return new HeldNotices.Start(keys, follow);
    }

    /**
     * Reads, in a thread of its own, what transactions open at a start commit: from each
     * partition's last stable offset at the start to its end then, {@code read_committed}, the keys
     * of the task's; retried while the broker is away; stopped by {@link #close}.
     */
    static final class Follow implements HeldNotices.Later {
        private final Properties props;
        private final Map<TopicPartition, Long> positions;
        private final Map<TopicPartition, Long> ends;
        private final Predicate<byte[]> mine;
        private final java.util.concurrent.ConcurrentLinkedQueue<byte[]> keys =
                new java.util.concurrent.ConcurrentLinkedQueue<>();
        private final Thread thread;
        private volatile boolean finished;
        private volatile boolean closed;
        private volatile KafkaConsumer<byte[], byte[]> consumer;

        Follow(
                Properties props,
                Map<TopicPartition, Long> from,
                Map<TopicPartition, Long> ends,
                Predicate<byte[]> mine) {
            this.props = props;
            this.positions = new HashMap<>(from);
            this.ends = ends;
            this.mine = mine;
            this.thread = new Thread(this::run, "freqcap-held-topic-follow");
            thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        private void run() {
            long progressAt = System.nanoTime();
            long failures = 0;
            long warnedAt = Long.MIN_VALUE;
            while (!closed && !positions.isEmpty()) {
                if (System.nanoTime() - progressAt > GIVE_UP_FOLLOW.toNanos()) {
                    // Longer than any transaction may stay open: what is left never commits.
                    LOG.error(
                            "held topic: no progress reading on after the start for {} minutes"
                                    + " on {}; stopped (the next start reads the topic again)",
                            GIVE_UP_FOLLOW.toMinutes(),
                            positions.keySet());
                    break;
                }
                try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
                    consumer = c;
                    c.assign(positions.keySet());
                    positions.forEach(c::seek);
                    while (!closed && !positions.isEmpty()) {
                        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                            if (r.key() != null && mine.test(r.key())) {
                                keys.add(r.key());
                            }
                        }
                        for (TopicPartition tp : List.copyOf(positions.keySet())) {
                            long at = c.position(tp);
                            if (at != positions.get(tp)) {
                                progressAt = System.nanoTime();
                                failures = 0;
                            }
                            if (at >= ends.get(tp)) {
                                positions.remove(tp);
                                c.pause(List.of(tp));
                            } else {
                                positions.put(tp, at);
                            }
                        }
                        if (System.nanoTime() - progressAt > GIVE_UP_FOLLOW.toNanos()) {
                            break;
                        }
                    }
                } catch (org.apache.kafka.common.errors.WakeupException e) {
                    return; // closed
                } catch (RuntimeException e) {
                    if (closed) {
                        return;
                    }
                    failures++;
                    // Once a minute at most, with the cause, while it keeps failing.
                    long now = System.nanoTime();
                    if (warnedAt == Long.MIN_VALUE || now - warnedAt > 60_000_000_000L) {
                        warnedAt = now;
                        LOG.warn(
                                "held topic: reading on after the start failed ({} times); trying"
                                        + " again every second",
                                failures,
                                e);
                    }
                    try {
                        Thread.sleep(1000);
                    } catch (InterruptedException stop) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }
            finished = true;
        }

        @Override
        public List<byte[]> poll() {
            List<byte[]> out = new ArrayList<>();
            for (byte[] k; (k = keys.poll()) != null; ) {
                out.add(k);
            }
            return out;
        }

        @Override
        public boolean done() {
            return finished && keys.isEmpty();
        }

        @Override
        public void close() {
            closed = true;
            KafkaConsumer<byte[], byte[]> c = consumer;
            if (c != null) {
                c.wakeup();
            }
        }
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
        return latest(bootstrap, clientProperties, topic, waitForOpen, keep, value -> value);
    }

    /** As {@link #live}, each kept key's latest value as {@code valueOf} makes it. */
    private static <V> Map<ByteBuffer, V> latest(
            String bootstrap,
            Map<String, String> clientProperties,
            String topic,
            Duration waitForOpen,
            Predicate<byte[]> keep,
            Function<byte[], V> valueOf) {
        Map<ByteBuffer, V> live = new LinkedHashMap<>();
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
                        live.put(ByteBuffer.wrap(key), valueOf.apply(value));
                    }
                });
        return live;
    }

    /**
     * How long the follow after a start may go without reading on before it stops: longer than any
     * broker in practice lets a transaction stay open ({@code transaction.max.timeout.ms}, 15
     * minutes by default).
     */
    static final Duration GIVE_UP_FOLLOW = Duration.ofHours(2);

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
        Properties p = consumer(bootstrap, clientProperties, true);
        Properties uncommitted = consumer(bootstrap, clientProperties, false);
        long start = System.nanoTime();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            List<TopicPartition> parts = partitions(c, topic);
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

    /** A consumer of the topic's bytes, {@code read_committed} or not, that commits nothing. */
    static Properties consumer(
            String bootstrap, Map<String, String> clientProperties, boolean readCommitted) {
        Properties p = KafkaClientConfig.properties(clientProperties);
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        // Where the log's start moves on during the scan (retention), read on from there.
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        KafkaClientConfig.readBytes(p);
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(4 << 20));
        p.put(
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                readCommitted ? "read_committed" : "read_uncommitted");
        return p;
    }

    /** The topic's partitions; the topic must exist. */
    static List<TopicPartition> partitions(KafkaConsumer<?, ?> c, String topic) {
        List<PartitionInfo> infos = c.partitionsFor(topic, Duration.ofMinutes(1));
        if (infos == null || infos.isEmpty()) {
            throw new IllegalStateException("held topic " + topic + " not found");
        }
        List<TopicPartition> parts = new ArrayList<>();
        for (PartitionInfo i : infos) {
            parts.add(new TopicPartition(topic, i.partition()));
        }
        return parts;
    }
}
