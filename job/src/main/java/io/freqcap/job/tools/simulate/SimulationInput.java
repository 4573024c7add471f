package io.freqcap.job.tools.simulate;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import io.freqcap.schema.message.RawRecord;
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
     * The full length of a record's value as read: more than {@code raw.value().length} when the
     * input kept only its first bytes (a line longer than the record bound).
     */
    default long lengthOf(RawRecord raw) {
        return raw.value() == null ? 0 : raw.value().length;
    }

    /**
     * Each line of a JSONL file is one record value, its bytes as they are (no key). Its source in
     * audit records is the file's name as topic, partition 0 and the line's index (from 0) as
     * offset. A line longer than {@code maxRecordBytes} is never held whole: its first bytes and
     * its length are kept, so that it is MALFORMED ("record too large") as in the job, however
     * long.
     */
    static SimulationInput lines(Path file, int maxRecordBytes) throws IOException {
        return new Lines(Files.newInputStream(file), file.getFileName().toString(), maxRecordBytes);
    }

    /**
     * The records of a topic, read_committed, partition after partition, each from the first record
     * at or after {@code fromMillis} (record time; null: the beginning) up to the first at or after
     * {@code untilMillis} (null: the end offsets when it starts).
     */
    static SimulationInput topic(
            String bootstrapServers,
            Map<String, String> clientProperties,
            String topic,
            Long fromMillis,
            Long untilMillis) {
        return new Topic(bootstrapServers, clientProperties, topic, fromMillis, untilMillis);
    }

    /** Splits a stream at {@code \n}, holding at most a bounded head of any line. */
    final class Lines implements SimulationInput {
        private final InputStream in;
        private final String name;
        private final int keep;
        private byte[] buf;
        private int pos;
        private int limit;
        private boolean eof;
        private long line;

        /** Bytes of the current line already dropped (beyond {@link #keep}). */
        private long dropped;

        /** Room to read into beyond the head kept of a long line. */
        private static final int CHUNK = 1 << 20;

        private RawRecord cut;
        private long cutLength;

        /**
         * @param keep the longest line held whole; of longer ones, the first {@code keep} bytes
         */
        Lines(InputStream in, String name, int keep) {
            this.in = in;
            this.name = name;
            this.keep = keep;
            this.buf = new byte[(int) Math.min(CHUNK, keep + 1L)];
        }

        @Override
        public long lengthOf(RawRecord raw) {
            return raw == cut ? cutLength : SimulationInput.super.lengthOf(raw);
        }

        @Override
        public RawRecord next() throws IOException {
            int start = pos;
            while (true) {
                for (int i = start; i < limit; i++) {
                    if (buf[i] == '\n') {
                        RawRecord r = line(pos, i);
                        pos = i + 1;
                        return r;
                    }
                }
                start = limit;
                if (eof) {
                    if (pos == limit && dropped == 0) {
                        return null; // the end, or the newline ending the last line
                    }
                    RawRecord r = line(pos, limit);
                    pos = limit;
                    return r;
                }
                // keep the line begun, make room, read more
                if (pos > 0) {
                    System.arraycopy(buf, pos, buf, 0, limit - pos);
                    start -= pos;
                    limit -= pos;
                    pos = 0;
                }
                if (limit - pos > keep) {
                    // Too long to hold: keep its first bytes, count the rest as they go by.
                    dropped += limit - pos - keep;
                    limit = pos + keep;
                    start = limit;
                }
                if (buf.length - limit < CHUNK && buf.length < keep + (long) CHUNK) {
                    // Room for a chunk, up to the head kept plus one.
                    long grown = Math.max((long) buf.length * 2, (long) limit + CHUNK);
                    buf = Arrays.copyOf(buf, (int) Math.min(grown, keep + (long) CHUNK));
                }
                int n = in.read(buf, limit, buf.length - limit);
                if (n < 0) {
                    eof = true;
                } else {
                    limit += n;
                }
            }
        }

        private RawRecord line(int from, int to) {
            RawRecord r = new RawRecord(null, Arrays.copyOfRange(buf, from, to), name, 0, line++);
            if (dropped > 0) {
                cut = r;
                cutLength = to - from + dropped;
                dropped = 0;
            }
            return r;
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

        Topic(
                String bootstrapServers,
                Map<String, String> clientProperties,
                String topic,
                Long fromMillis,
                Long untilMillis) {
            Properties p = new Properties();
            p.putAll(clientProperties); // --kafka-config first: the settings below win
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

    /** The lines of a file an option names; one that cannot be read is the option's error. */
    static List<String> lines(Path file, String option) throws InvalidOptionException {
        try {
            return Files.readAllLines(file);
        } catch (IOException e) {
            throw new InvalidOptionException(
                    "--" + option + ": cannot read " + file + ": " + e.getMessage());
        }
    }
}
