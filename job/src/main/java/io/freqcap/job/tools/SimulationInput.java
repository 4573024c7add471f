package io.freqcap.job.tools;

import io.freqcap.schema.RawRecord;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** The records a backtest replays, in order: the lines of a file, or a range of a topic. */
interface SimulationInput extends AutoCloseable {
    /** The next record, or null at the end. */
    RawRecord next() throws IOException;

    @Override
    void close() throws IOException;

    /**
     * Each line of a JSONL file is one record value, its bytes as they are (no key). Its source in
     * audit records is the file's name as topic, partition 0 and the line's index (from 0) as
     * offset.
     */
    static SimulationInput lines(Path file) throws IOException {
        return new Lines(Files.newInputStream(file), file.getFileName().toString());
    }

    /**
     * The records of a topic, read_committed, partition after partition, each from the first record
     * at or after {@code fromMillis} (record time; null: the beginning) up to the first at or after
     * {@code untilMillis} (null: the end offsets when it starts).
     */
    static SimulationInput topic(
            String bootstrapServers, String topic, Long fromMillis, Long untilMillis) {
        return new Topic(bootstrapServers, topic, fromMillis, untilMillis);
    }

    /** Splits a stream at {@code \n}. */
    final class Lines implements SimulationInput {
        private final InputStream in;
        private final String name;
        private byte[] buf = new byte[1 << 20];
        private int pos;
        private int limit;
        private boolean eof;
        private long line;

        Lines(InputStream in, String name) {
            this.in = in;
            this.name = name;
        }

        @Override
        public RawRecord next() throws IOException {
            int start = pos;
            while (true) {
                for (int i = start; i < limit; i++) {
                    if (buf[i] == '\n') {
                        byte[] value = Arrays.copyOfRange(buf, pos, i);
                        pos = i + 1;
                        return new RawRecord(null, value, name, 0, line++);
                    }
                }
                start = limit;
                if (eof) {
                    if (pos == limit) {
                        return null; // the end, or the newline ending the last line
                    }
                    byte[] value = Arrays.copyOfRange(buf, pos, limit);
                    pos = limit;
                    return new RawRecord(null, value, name, 0, line++);
                }
                // keep the line begun, make room, read more
                if (pos > 0) {
                    System.arraycopy(buf, pos, buf, 0, limit - pos);
                    start -= pos;
                    limit -= pos;
                    pos = 0;
                }
                if (limit == buf.length) {
                    buf = Arrays.copyOf(buf, buf.length * 2);
                }
                int n = in.read(buf, limit, buf.length - limit);
                if (n < 0) {
                    eof = true;
                } else {
                    limit += n;
                }
            }
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    /** A topic range, one partition at a time. */
    final class Topic implements SimulationInput {
        private final KafkaConsumer<byte[], byte[]> consumer;
        private final ArrayDeque<long[]> ranges = new ArrayDeque<>(); // partition, from, until
        private final ArrayDeque<ConsumerRecord<byte[], byte[]>> polled = new ArrayDeque<>();
        private final String topic;
        private TopicPartition current;
        private long until;

        Topic(String bootstrapServers, String topic, Long fromMillis, Long untilMillis) {
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
            p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
            this.consumer = new KafkaConsumer<>(p);
            this.topic = topic;
            List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
            if (infos == null || infos.isEmpty()) {
                consumer.close();
                throw new IllegalArgumentException("topic " + topic + " does not exist");
            }
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo i : infos) {
                partitions.add(new TopicPartition(topic, i.partition()));
            }
            partitions.sort(Comparator.comparingInt(TopicPartition::partition));
            Map<TopicPartition, Long> begin = consumer.beginningOffsets(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            Map<TopicPartition, Long> from = at(partitions, fromMillis, begin, end);
            Map<TopicPartition, Long> to = at(partitions, untilMillis, end, end);
            for (TopicPartition tp : partitions) {
                if (from.get(tp) < to.get(tp)) {
                    ranges.add(new long[] {tp.partition(), from.get(tp), to.get(tp)});
                }
            }
        }

        /** The first offset at or after {@code millis} per partition; {@code otherwise} if null. */
        private Map<TopicPartition, Long> at(
                List<TopicPartition> partitions,
                Long millis,
                Map<TopicPartition, Long> otherwise,
                Map<TopicPartition, Long> end) {
            if (millis == null) {
                return otherwise;
            }
            Map<TopicPartition, Long> query = new HashMap<>();
            partitions.forEach(tp -> query.put(tp, millis));
            Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(query);
            Map<TopicPartition, Long> out = new HashMap<>();
            for (TopicPartition tp : partitions) {
                OffsetAndTimestamp o = found.get(tp);
                out.put(tp, o == null ? end.get(tp) : Math.min(o.offset(), end.get(tp)));
            }
            return out;
        }

        @Override
        public RawRecord next() {
            while (true) {
                ConsumerRecord<byte[], byte[]> r = polled.poll();
                if (r != null) {
                    if (r.offset() < until) {
                        return new RawRecord(
                                r.key(), r.value(), r.topic(), r.partition(), r.offset());
                    }
                    polled.clear();
                    current = null;
                }
                if (current != null && consumer.position(current) >= until) {
                    current = null; // what is left are transaction markers
                }
                if (current == null) {
                    long[] range = ranges.poll();
                    if (range == null) {
                        return null;
                    }
                    current = new TopicPartition(topic, (int) range[0]);
                    until = range[2];
                    consumer.assign(List.of(current));
                    consumer.seek(current, range[1]);
                }
                consumer.poll(Duration.ofMillis(500)).forEach(polled::add);
            }
        }

        @Override
        public void close() {
            consumer.close();
        }
    }
}
