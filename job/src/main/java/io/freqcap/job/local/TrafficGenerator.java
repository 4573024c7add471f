package io.freqcap.job.local;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Synthetic campaign traffic for the local runner: users picked with a skew (a few are messaged a
 * lot), each in a time zone of its own, four channels, mostly marketing with some promotions and
 * some transactional (exempt) messages, about 1% resent messages (duplicates) and 0.3% malformed
 * records. Message time is the wall clock, with a few messages scheduled minutes late. With a
 * receipts topic, users of different habits open what they get, or never do ({@link
 * #OPENS_PERCENT}), and some messages bounce.
 */
public final class TrafficGenerator implements Runnable {
    private static final String[] CHANNELS = {"push", "push", "email", "sms", "in_app"};

    /** Users' zones (null: the config's): each user keeps one. */
    private static final String[] ZONES = {
        null, "Asia/Kolkata", "America/New_York", "Europe/Berlin", "Australia/Sydney"
    };

    private static final String[] CAMPAIGNS = {
        "spring-sale", "weekly-digest", "win-back", "new-feature"
    };

    private final String bootstrap;
    private final Map<String, String> clientProperties;
    private final Topics topics;
    private final int users;
    private final int ratePerSecond;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicLong sent = new AtomicLong();

    /**
     * Where the generator writes.
     *
     * @param preferences the preferences topic, or null: no opt-outs, pauses or limits
     * @param receipts the receipts topic, or null: no receipts
     */
    public record Topics(String input, String preferences, String receipts) {}

    /**
     * A message sent, for a receipt a little later.
     *
     * @param status what the receipt says: {@code failed}, {@code delivered} or {@code opened}
     */
    private record Sent(long atNanos, long user, String messageId, String status) {}

    /**
     * How often a user opens what it gets, by habit (userId modulo 4): most, some, or never (two of
     * four): under the sample config's {@code fatigue} the ones who never open get fewer messages
     * after five, and the progress line counts the messages decided under a lowered cap.
     */
    private static final int[] OPENS_PERCENT = {80, 30, 0, 0};

    /** How long after a message its receipt goes out: it has been decided by then. */
    private static final long RECEIPT_DELAY_NANOS = 2_000_000_000L;

    /**
     * @param clientProperties {@code --kafka-config}'s properties, none for the embedded Kafka
     */
    public TrafficGenerator(
            String bootstrap,
            Map<String, String> clientProperties,
            Topics topics,
            int users,
            int ratePerSecond) {
        this.bootstrap = bootstrap;
        this.clientProperties = clientProperties;
        this.topics = topics;
        this.users = users;
        this.ratePerSecond = ratePerSecond;
    }

    public long sent() {
        return sent.get();
    }

    public void stop() {
        running.set(false);
    }

    @Override
    public void run() {
        Properties p = new Properties();
        p.putAll(clientProperties);
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "10");
        Random rnd = new Random();
        long seq = 0;
        String lastId = "m-0";
        long lastUser = 0;
        ArrayDeque<Sent> awaitingReceipt = new ArrayDeque<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            long start = System.nanoTime();
            while (running.get()) {
                while (!awaitingReceipt.isEmpty()
                        && System.nanoTime() - awaitingReceipt.peek().atNanos()
                                > RECEIPT_DELAY_NANOS) {
                    Sent m = awaitingReceipt.poll();
                    send(
                            producer,
                            topics.receipts(),
                            m.user(),
                            "{\"messageId\": \""
                                    + m.messageId()
                                    + "\", \"userId\": "
                                    + m.user()
                                    + ", \"status\": \""
                                    + m.status()
                                    + "\", \"timestamp\": "
                                    + System.currentTimeMillis()
                                    + "}");
                }
                long due = (System.nanoTime() - start) / 1_000_000L * ratePerSecond / 1000L;
                while (seq < due && running.get()) {
                    seq++;
                    long user = (long) Math.floor(Math.pow(rnd.nextDouble(), 2) * users);
                    String id = "m-" + seq;
                    if (rnd.nextInt(100) == 0) {
                        user = lastUser; // a resend: same user, same messageId
                        id = lastId;
                    }
                    lastUser = user;
                    lastId = id;
                    byte[] value;
                    if (rnd.nextInt(1000) < 3) {
                        value =
                                ("{\"messageId\": \"" + id + "\", \"userId\": \"" + user + "\"}")
                                        .getBytes(StandardCharsets.UTF_8);
                    } else {
                        long t =
                                System.currentTimeMillis()
                                        - (rnd.nextInt(50) == 0 ? rnd.nextInt(600_000) : 0);
                        int c = rnd.nextInt(10);
                        String category = c == 0 ? "transactional" : c < 3 ? "promo" : "marketing";
                        String zone = ZONES[(int) (user % ZONES.length)];
                        // Mostly promotions, some news, a few alerts that may take a held
                        // promotion's place (the sample config's preempt rule).
                        int kind = rnd.nextInt(20);
                        int priority = kind < 14 ? 10 : kind < 18 ? 40 : 80;
                        value =
                                ("{\"messageId\": \""
                                                + id
                                                + "\", \"userId\": "
                                                + user
                                                + ", \"channel\": \""
                                                + CHANNELS[rnd.nextInt(CHANNELS.length)]
                                                + "\", \"category\": \""
                                                + category
                                                + "\", \"campaignId\": \""
                                                + CAMPAIGNS[rnd.nextInt(CAMPAIGNS.length)]
                                                + "\", \"priority\": "
                                                + priority
                                                + ", "
                                                + (zone == null
                                                        ? ""
                                                        : "\"timezone\": \"" + zone + "\", ")
                                                + "\"timestamp\": "
                                                + t
                                                + ", \"payload\": {\"title\": \"Offer "
                                                + seq
                                                + "\"}}")
                                        .getBytes(StandardCharsets.UTF_8);
                    }
                    producer.send(
                            new ProducerRecord<>(
                                    topics.input(),
                                    Long.toString(user).getBytes(StandardCharsets.UTF_8),
                                    value));
                    sent.incrementAndGet();
                    if (topics.receipts() != null && rnd.nextInt(20) == 0) {
                        // Most such receipts are bounces: each frees its message's place.
                        String status = rnd.nextInt(10) == 0 ? "delivered" : "failed";
                        awaitingReceipt.add(new Sent(System.nanoTime(), user, id, status));
                    } else if (topics.receipts() != null
                            && rnd.nextInt(100) < OPENS_PERCENT[(int) (user % 4)]) {
                        awaitingReceipt.add(new Sent(System.nanoTime(), user, id, "opened"));
                    }
                    if (topics.preferences() != null && rnd.nextInt(200) == 0) {
                        send(producer, topics.preferences(), user, preference(rnd, user));
                    }
                }
                Thread.sleep(5);
            }
            producer.flush();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A record keyed by the user; a null value is a tombstone. */
    public static void send(
            KafkaProducer<byte[], byte[]> producer, String topic, long user, String value) {
        producer.send(
                new ProducerRecord<>(
                        topic,
                        Long.toString(user).getBytes(StandardCharsets.UTF_8),
                        value == null ? null : value.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * What a user chooses now (contract.md §10): no more SMS, a pause of two minutes, one email a
     * day, or a clearing of all of it. The version is the wall clock, so it only grows.
     */
    private static String preference(Random rnd, long user) {
        int kind = rnd.nextInt(10);
        if (kind == 9) {
            return null; // tombstone
        }
        String head = "{\"userId\": " + user + ", \"version\": " + System.currentTimeMillis();
        if (kind < 4) {
            return head + ", \"optOut\": {\"channels\": [\"sms\"]}}";
        }
        if (kind < 7) {
            return head + ", \"pausedUntil\": " + (System.currentTimeMillis() + 120_000) + "}";
        }
        return head + ", \"channels\": {\"email\": [{\"window\": \"1d\", \"max\": 1}]}}";
    }
}
