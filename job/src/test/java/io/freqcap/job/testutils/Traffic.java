package io.freqcap.job.testutils;

import static io.freqcap.schema.Instants.DAY;

import io.freqcap.operators.backtest.Backtest;
import io.freqcap.operators.backtest.FinalOutcomes;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.message.RawRecord;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Test traffic for the Kafka pipeline tests: seeded input with every kind of record, sent to a
 * topic as the job's partitioner would spread it, and the decision core's own outcome for each
 * input (the oracle the job's outputs are held against).
 */
public final class Traffic {
    private Traffic() {}

    public static final long START = 1_763_769_600_000L;

    /**
     * A start for {@code days} of traffic that ends a day before the wall clock, at a whole hour:
     * recent enough for what a window keeps, and every hold (12 h at most) already due.
     */
    public static long recent(int days) {
        long hour = 3_600_000L;
        return (System.currentTimeMillis() / hour) * hour - (days + 1) * DAY;
    }

    public static String config(long version, int perDay, int perWeek, int emailPerDay) {
        return "{\"version\":"
                + version
                + ",\"rules\":[{\"segment\":\"*\",\"limits\":["
                + "{\"window\":\"1d\",\"max\":"
                + perDay
                + "},{\"window\":\"7d\",\"max\":"
                + perWeek
                + "}],"
                + "\"channels\":{\"email\":[{\"window\":\"1d\",\"max\":"
                + emailPerDay
                + "}]}}],"
                + "\"exempt\":[\"transactional\"]}";
    }

    /** A config of one rule: at most {@code max} a day. */
    public static String perDay(int max) {
        return "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\","
                + "\"max\":"
                + max
                + "}]}]}";
    }

    /**
     * A config of one rule: at most {@code max} a day, a message held up to an hour through quiet
     * hours from {@code from} to {@code to} (their UTC times of day, to the minute), on these
     * channels (every channel when none).
     */
    public static String quietHoursConfig(int max, Instant from, Instant to, String... channels) {
        LocalTime f = LocalTime.ofInstant(from, ZoneOffset.UTC);
        LocalTime t = LocalTime.ofInstant(to, ZoneOffset.UTC);
        return "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\","
                + "\"max\":"
                + max
                + "}],\"hold\":\"1h\",\"quietHours\":{\"from\":\""
                + String.format("%02d:%02d", f.getHour(), f.getMinute())
                + "\",\"to\":\""
                + String.format("%02d:%02d", t.getHour(), t.getMinute())
                + "\""
                + (channels.length == 0
                        ? ""
                        : ",\"channels\":[\"" + String.join("\",\"", channels) + "\"]")
                + "}}]}";
    }

    /** One input record as produced, and where it landed. */
    public static final class Input {
        public final int seq;
        public final byte[] key;
        public final byte[] value;
        int partition;
        long offset;

        public Input(int seq, byte[] key, byte[] value) {
            this.seq = seq;
            this.key = key;
            this.value = value;
        }
    }

    /**
     * Seeded traffic: users over days of message time, two channels, exempt categories,
     * out-of-order and very late (stale) timestamps, resent messages (duplicates), records without
     * a key, and malformed records of several kinds. Every record carries a unique {@code seq} so
     * its output can be found.
     */
    public static List<Input> traffic(long seed, int messages, int users, int days) {
        return traffic(seed, messages, users, days, START);
    }

    /**
     * The same traffic from {@code start}: {@link #recent} for outputs that read the wall clock
     * (the Redis mirror's keys expire a window after their last entry).
     */
    public static List<Input> traffic(long seed, int messages, int users, int days, long start) {
        Random rnd = new Random(seed);
        List<Input> out = new ArrayList<>();
        Map<Long, List<String>> sentByUser = new HashMap<>();
        double step = (double) days * DAY / messages;
        for (int i = 0; i < messages; i++) {
            long user = rnd.nextInt(users);
            byte[] key = String.valueOf(user).getBytes(StandardCharsets.UTF_8);
            int kind = rnd.nextInt(1000);
            if (kind < 6) {
                out.add(new Input(i, rnd.nextBoolean() ? key : null, malformed(rnd, i, user)));
                continue;
            }
            long t = start + (long) (i * step);
            int shift = rnd.nextInt(100);
            if (shift < 10) {
                t -= rnd.nextInt(6 * 3600_000); // a few hours out of order
            } else if (shift < 11) {
                t -= 8 * DAY + rnd.nextInt((int) DAY); // far too late: stale for active users
            }
            List<String> sent = sentByUser.computeIfAbsent(user, u -> new ArrayList<>());
            String messageId =
                    !sent.isEmpty() && rnd.nextInt(50) == 0
                            ? sent.get(rnd.nextInt(sent.size()))
                            : "m-" + i;
            sent.add(messageId);
            String channel = rnd.nextInt(3) == 0 ? "email" : "push";
            String category =
                    rnd.nextInt(20) == 0
                            ? "transactional"
                            : rnd.nextInt(10) == 0 ? "promo" : "marketing";
            String json =
                    "{\"messageId\":\""
                            + messageId
                            + "\",\"userId\":"
                            + user
                            + ",\"channel\":\""
                            + channel
                            + "\",\"category\":\""
                            + category
                            + "\",\"campaignId\":\"c"
                            + rnd.nextInt(5)
                            + "\",\"timestamp\":"
                            + t
                            + ",\"seq\":"
                            + i
                            + ",\"payload\":{\"title\":\"Sale \\u00e9 "
                            + i
                            + "\"}}";
            out.add(
                    new Input(
                            i,
                            rnd.nextInt(20) == 0 ? null : key,
                            json.getBytes(StandardCharsets.UTF_8)));
        }
        return out;
    }

    /** A push message of {@code user} keyed by its userId, carrying its {@code seq}. */
    /** A message of {@code channel} with a priority, keyed by its user, its seq in its value. */
    public static Input message(
            int seq, long user, String messageId, String channel, long timestamp, int priority) {
        String json =
                String.format(
                        "{\"messageId\":\"%s\",\"userId\":%d,\"channel\":\"%s\",\"timestamp\":%d,"
                                + "\"priority\":%d,\"seq\":%d}",
                        messageId, user, channel, timestamp, priority, seq);
        return new Input(
                seq,
                Long.toString(user).getBytes(StandardCharsets.UTF_8),
                json.getBytes(StandardCharsets.UTF_8));
    }

    /** Numbers a test's messages from 0 in the order it makes them. */
    public static final class Sequence {
        private int seq;

        /** Adds the next message (see {@link Traffic#message}) to {@code inputs}. */
        public void add(
                List<Input> inputs,
                long user,
                String messageId,
                String channel,
                long timestamp,
                int priority) {
            inputs.add(message(seq++, user, messageId, channel, timestamp, priority));
        }
    }

    public static Input pushMessage(int seq, long user, String messageId, long timestamp) {
        String json =
                "{\"messageId\":\""
                        + messageId
                        + "\",\"userId\":"
                        + user
                        + ",\"channel\":\"push\",\"timestamp\":"
                        + timestamp
                        + ",\"seq\":"
                        + seq
                        + "}";
        return new Input(
                seq,
                Long.toString(user).getBytes(StandardCharsets.UTF_8),
                json.getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] malformed(Random rnd, int seq, long user) {
        String s;
        switch (rnd.nextInt(6)) {
            case 0:
                return null; // tombstone
            case 1:
                s =
                        "{\"messageId\":\"x"
                                + seq
                                + "\",\"userId\":\""
                                + user
                                + "\",\"channel\":\"push\",\"timestamp\":1,\"seq\":"
                                + seq
                                + "}";
                break;
            case 2:
                s =
                        "{\"messageId\":\"x"
                                + seq
                                + "\",\"userId\":"
                                + user
                                + ",\"timestamp\":1,\"seq\":"
                                + seq
                                + "}";
                break;
            case 3:
                s =
                        "{\"messageId\":\"x"
                                + seq
                                + "\",\"userId\":"
                                + user
                                + ",\"channel\":\"push\",\"timestamp\":1,\"seq\":"
                                + seq
                                + "} trailing";
                break;
            case 4:
                s = "not json at all " + seq;
                break;
            default:
                s =
                        "{\"messageId\":\"x"
                                + seq
                                + "\",\"userId\":"
                                + user
                                + ".0,\"channel\":\"push\",\"timestamp\":1,\"seq\":"
                                + seq
                                + "}";
        }
        return s.getBytes(StandardCharsets.UTF_8);
    }

    public static Properties producerProps(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        return p;
    }

    /**
     * Produces inputs in order, recording partitions and offsets. Records without a key go to the
     * partition their user's keyed records use, as the contract asks of producers.
     */
    public static void produce(String bootstrap, String topic, int partitions, List<Input> inputs)
            throws Exception {
        produce(producerProps(bootstrap), topic, partitions, inputs);
    }

    /** As above, with the producer's own properties (a longer delivery timeout, say). */
    public static void produce(Properties props, String topic, int partitions, List<Input> inputs)
            throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            for (Input in : inputs) {
                Integer partition = null;
                if (in.key == null) {
                    partition = Math.floorMod(in.seq, partitions);
                    Long user = userOf(in);
                    if (user != null) {
                        partition =
                                partitionFor(
                                        String.valueOf(user).getBytes(StandardCharsets.UTF_8),
                                        partitions);
                    }
                }
                acks.add(producer.send(new ProducerRecord<>(topic, partition, in.key, in.value)));
            }
            for (int i = 0; i < inputs.size(); i++) {
                RecordMetadata md = acks.get(i).get();
                inputs.get(i).partition = md.partition();
                inputs.get(i).offset = md.offset();
            }
        }
    }

    /** Kafka's default partitioner for a keyed record. */
    public static int partitionFor(byte[] key, int partitions) {
        return org.apache.kafka.clients.producer.internals.BuiltInPartitioner.partitionForKey(
                key, partitions);
    }

    /**
     * The decision core's verdict on each input (by seq), every input decided in partition order
     * under one config by the job's own backtest.
     */
    public static Map<Integer, Verdict> decisionCore(List<Input> inputs, String json)
            throws Exception {
        Map<Integer, Verdict> out = new HashMap<>();
        finalOutcomes(inputs, json).forEach((seq, d) -> out.put(seq, d.verdict()));
        return out;
    }

    /**
     * Each input's final outcome (by seq) as the job's own backtest decides them in partition order
     * under one config: a held message whose place a later one took ends PREEMPTED (contract.md §6,
     * §8).
     */
    public static Map<Integer, Decided> finalOutcomes(List<Input> inputs, String json)
            throws Exception {
        Map<Integer, Decided> out = new HashMap<>();
        try (Backtest backtest = Backtest.start(LimitConfig.parse(json), List.of(), s -> {})) {

            FinalOutcomes<Integer> outcomes =
                    new FinalOutcomes<>(true, (d, seq) -> out.put(seq, d));
            for (Input in : inPartitionOrder(inputs)) {
                RawRecord raw = new RawRecord(in.key, in.value, "in", in.partition, in.offset);
                outcomes.add(backtest.decide(InboundMessage.of(raw)), in.seq, backtest.clock());
            }
            outcomes.finish();
        }
        return out;
    }

    /** Inputs as the job reads them: by partition, then offset (per user: partition order). */
    public static List<Input> inPartitionOrder(List<Input> inputs) {
        List<Input> ordered = new ArrayList<>(inputs);
        ordered.sort(
                java.util.Comparator.<Input>comparingInt(x -> x.partition)
                        .thenComparingLong(x -> x.offset));
        return ordered;
    }

    public static Long userOf(Input in) {
        try {
            return OutboundMessage.parse(in.value).userId();
        } catch (Exception e) {
            return null;
        }
    }

    public static void send(String bootstrap, String topic, String value) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(producerProps(bootstrap))) {
            producer.send(new ProducerRecord<>(topic, null, value.getBytes(StandardCharsets.UTF_8)))
                    .get();
        }
    }
}
