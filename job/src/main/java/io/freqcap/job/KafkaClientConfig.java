package io.freqcap.job;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Kafka client properties from {@code --kafka-config FILE} (contract.md §8): security ({@code
 * security.protocol}, {@code sasl.*}, {@code ssl.*}), Kafka's own config providers for secrets
 * ({@code config.providers=file}, then {@code ${file:/run/secrets/kafka.properties:password}}), and
 * anything else a managed Kafka asks of its clients. Applied first to every Kafka client the job
 * and its tools create, so that the job's own settings (bootstrap servers, group, isolation,
 * transactions) still win where they must.
 *
 * <p>The values are never logged by freqcap; Kafka's clients log their configuration with password
 * types ({@code sasl.jaas.config}, {@code ssl.*.password}) shown as {@code [hidden]}.
 */
public final class KafkaClientConfig {
    private KafkaClientConfig() {}

    /** The properties of a Java properties file, sorted by name. */
    public static Map<String, String> read(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        Map<String, String> out = new TreeMap<>();
        for (String name : p.stringPropertyNames()) {
            out.put(name, p.getProperty(name).trim());
        }
        return out;
    }

    /** Puts each property into a client's configuration (before the client's own settings). */
    public static void apply(Map<String, String> properties, BiConsumer<String, String> set) {
        properties.forEach(set);
    }

    /** The same, into {@link Properties}. */
    public static Properties properties(Map<String, String> properties) {
        Properties p = new Properties();
        p.putAll(properties);
        return p;
    }

    /** Makes a consumer of {@code p} read keys and values as bytes. */
    public static void readBytes(Properties p) {
        p.put(
                org.apache.kafka.clients.consumer.ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName());
        p.put(
                org.apache.kafka.clients.consumer.ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName());
    }
}
