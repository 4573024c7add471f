package io.freqcap.job.local;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.job.KafkaClientConfig;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.decision.Delivery;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;

/**
 * Reads the job's two output topics as a downstream consumer would (read_committed) and counts
 * decisions, for the local runner's progress lines.
 */
public final class OutputCounter implements Runnable, AutoCloseable {
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final String deliveryTopic;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> segments = new ConcurrentHashMap<>();

    /**
     * @param clientProperties {@code --kafka-config}'s properties, none for the embedded Kafka
     */
    public OutputCounter(
            String bootstrap,
            Map<String, String> clientProperties,
            String deliveryTopic,
            String auditTopic) {
        Properties p = new Properties();
        p.putAll(clientProperties);
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "freqcap-local-progress-" + System.nanoTime());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        KafkaClientConfig.readBytes(p);
        this.consumer = new KafkaConsumer<>(p);
        this.deliveryTopic = deliveryTopic;
        consumer.subscribe(List.of(deliveryTopic, auditTopic));
    }

    @Override
    public void run() {
        while (running.get()) {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                String decision;
                if (r.topic().equals(deliveryTopic)) {
                    Header h = r.headers().lastHeader(Delivery.HEADER_DECISION);
                    decision = h == null ? "?" : new String(h.value(), StandardCharsets.UTF_8);
                    Header shadow = r.headers().lastHeader(Delivery.HEADER_SHADOW);
                    if (shadow != null
                            && "REJECTED"
                                    .equals(new String(shadow.value(), StandardCharsets.UTF_8))) {
                        shadowRejected.increment();
                    }
                    Header s = r.headers().lastHeader(Delivery.HEADER_SEGMENT);
                    segments.computeIfAbsent(
                                    s == null ? "?" : new String(s.value(), StandardCharsets.UTF_8),
                                    k -> new LongAdder())
                            .increment();
                } else {
                    try {
                        JsonNode a = Json.MAPPER.readTree(r.value());
                        decision = a.path("decision").asText("?");
                        if ("REJECTED".equals(a.path("shadow").path("decision").asText())) {
                            shadowRejected.increment();
                        }
                    } catch (Exception e) {
                        decision = "?";
                    }
                }
                counts.computeIfAbsent(decision, d -> new LongAdder()).increment();
            }
        }
        consumer.close();
    }

    /** Not a decision: messages the shadow rules would have rejected, whatever was decided. */
    public static final String SHADOW_REJECTED = "shadow-rejected";

    private final LongAdder shadowRejected = new LongAdder();

    /** Outputs of one decision, or {@link #SHADOW_REJECTED}. */
    public long count(String decision) {
        if (decision.equals(SHADOW_REJECTED)) {
            return shadowRejected.sum();
        }
        LongAdder a = counts.get(decision);
        return a == null ? 0 : a.sum();
    }

    public long total() {
        return counts.values().stream().mapToLong(LongAdder::sum).sum();
    }

    public Map<String, Long> snapshot() {
        Map<String, Long> m = new TreeMap<>();
        counts.forEach((k, v) -> m.put(k, v.sum()));
        return m;
    }

    /** Deliveries by the segment whose rule applied. */
    public Map<String, Long> segments() {
        Map<String, Long> m = new TreeMap<>();
        segments.forEach((k, v) -> m.put(k, v.sum()));
        return m;
    }

    @Override
    public void close() {
        running.set(false);
    }
}
