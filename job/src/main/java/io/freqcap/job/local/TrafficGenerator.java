package io.freqcap.job.local;

import java.nio.charset.StandardCharsets;
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
 * records. Message time is the wall clock, with a few messages scheduled minutes late.
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
    private final String topic;
    private final int users;
    private final int ratePerSecond;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicLong sent = new AtomicLong();

    /**
     * @param clientProperties {@code --kafka-config}'s properties, none for the embedded Kafka
     */
    public TrafficGenerator(
            String bootstrap,
            Map<String, String> clientProperties,
            String topic,
            int users,
            int ratePerSecond) {
        this.bootstrap = bootstrap;
        this.clientProperties = clientProperties;
        this.topic = topic;
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
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            long start = System.nanoTime();
            while (running.get()) {
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
                                    topic,
                                    Long.toString(user).getBytes(StandardCharsets.UTF_8),
                                    value));
                    sent.incrementAndGet();
                }
                Thread.sleep(5);
            }
            producer.flush();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
