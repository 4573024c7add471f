package io.freqcap.job.tools.export;

import io.freqcap.job.KafkaClientConfig;
import io.freqcap.job.tools.ToolOptions;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.decision.DeliveryLine;
import io.freqcap.schema.message.OutboundMessage;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * {@code freqcap-export}: the delivery and audit topics, read_committed from the beginning to their
 * end offsets at start, as one JSONL file for the notebooks. A delivery becomes {@code {"decision",
 * "messageId", "userId", "segment", "configVersion", ["shadow",] "channel", "category",
 * ["campaignId",] "timestamp"}} (its headers and the message's fields; a value that is not JSON is
 * left out and counted); an audit record is written as it is.
 */
public final class Export {
    private Export() {}

    static final String USAGE =
            "usage: freqcap-export --bootstrap-servers HOST:PORT --output FILE.jsonl"
                    + " [--delivery-topic deliveries] [--audit-topic capping-audit]"
                    + " [--kafka-config FILE]";

    private static final Set<String> OPTIONS =
            Set.of("bootstrap-servers", "output", "delivery-topic", "audit-topic", "kafka-config");

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        ToolOptions.Parsed parsed =
                ToolOptions.parse("freqcap-export", USAGE, args, OPTIONS, out, err);
        if (parsed.exit() != null) {
            return parsed.exit();
        }
        Map<String, String> opts = parsed.options();
        for (String required : List.of("bootstrap-servers", "output")) {
            if (!opts.containsKey(required)) {
                err.println("freqcap-export: --" + required + " is required\n" + USAGE);
                return 2;
            }
        }
        Properties p = new Properties();
        if (opts.containsKey("kafka-config")) {
            try {
                p.putAll(KafkaClientConfig.read(Path.of(opts.get("kafka-config"))));
            } catch (IOException | IllegalArgumentException e) {
                err.println(
                        "freqcap-export: --kafka-config: cannot read "
                                + opts.get("kafka-config")
                                + ": "
                                + e.getMessage());
                return 2;
            }
        }
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, opts.get("bootstrap-servers"));
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        String deliveries = opts.getOrDefault("delivery-topic", "deliveries");
        String audit = opts.getOrDefault("audit-topic", "capping-audit");
        long[] counts = new long[3]; // deliveries, audit records, deliveries not JSON
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
                BufferedWriter w = Files.newBufferedWriter(Path.of(opts.get("output")))) {
            for (String topic : List.of(deliveries, audit)) {
                List<TopicPartition> partitions = new ArrayList<>();
                List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
                if (infos == null || infos.isEmpty()) {
                    err.println("freqcap-export: topic " + topic + " does not exist");
                    return 2;
                }
                infos.forEach(i -> partitions.add(new TopicPartition(topic, i.partition())));
                Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
                consumer.assign(partitions);
                consumer.seekToBeginning(partitions);
                while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                        if (r.offset() >= end.get(new TopicPartition(r.topic(), r.partition()))) {
                            continue;
                        }
                        String line;
                        if (topic.equals(audit)) {
                            line = new String(r.value(), StandardCharsets.UTF_8);
                            counts[1]++;
                        } else {
                            line = delivery(r);
                            if (line == null) {
                                counts[2]++;
                                continue;
                            }
                            counts[0]++;
                        }
                        w.write(line);
                        w.write('\n');
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            err.println("freqcap-export: " + e.getMessage());
            return 1;
        }
        out.printf(
                "exported %,d deliveries and %,d audit records to %s%s%n",
                counts[0],
                counts[1],
                opts.get("output"),
                counts[2] == 0
                        ? ""
                        : String.format(" (%,d deliveries not JSON, left out)", counts[2]));
        return 0;
    }

    /** A delivery's line: its headers and its message's fields; null for a value not a message. */
    private static String delivery(ConsumerRecord<byte[], byte[]> r) {
        // Decided already, maybe by an earlier version whose reader let more through (0.3 held
        // "priority": "high"): read as the job reads its held messages.
        OutboundMessage m = OutboundMessage.parseDecided(r.value());
        if (m == null) {
            return null;
        }
        String version = header(r, Delivery.HEADER_CONFIG_VERSION);
        String sendAt = header(r, Delivery.HEADER_SEND_AT);
        DeliveryLine line =
                new DeliveryLine(
                        header(r, Delivery.HEADER_DECISION),
                        m.messageId(),
                        m.userId(),
                        header(r, Delivery.HEADER_SEGMENT),
                        version == null ? null : Long.valueOf(version),
                        header(r, Delivery.HEADER_SHADOW),
                        sendAt == null ? null : Long.valueOf(sendAt),
                        m);
        return new String(line.json(), StandardCharsets.UTF_8);
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
