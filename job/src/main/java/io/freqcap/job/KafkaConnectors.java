package io.freqcap.job;

import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.RawRecord;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

/** Kafka sources and sinks of the job, built from its options. */
public final class KafkaConnectors {
    private KafkaConnectors() {}

    /** Bytes a produce request adds to a record's key and value: headers, record and batch. */
    static final int MAX_REQUEST_OVERHEAD = 64 * 1024;

    public static KafkaSource<RawRecord> inputSource(KafkaSettings c) {
        OffsetsInitializer start = inputStart(c);
        var builder = KafkaSource.<RawRecord>builder();
        KafkaClientConfig.apply(c.clientProperties(), builder::setProperty);
        return builder.setBootstrapServers(c.bootstrapServers())
                .setTopics(c.topics().input())
                .setGroupId(c.groupId())
                .setStartingOffsets(start)
                .setDeserializer(KeptBytes.raw())
                // Upstream producers may be transactional: never decide an aborted message.
                .setProperty("isolation.level", "read_committed")
                .build();
    }

    private static OffsetsInitializer inputStart(KafkaSettings c) {
        return switch (c.startingOffsets()) {
            case EARLIEST -> OffsetsInitializer.earliest();
            case LATEST -> OffsetsInitializer.latest();
            default -> OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST);
        };
    }

    /**
     * A control topic, read from its beginning whenever the job starts without state, whatever
     * offsets its group committed and whatever --starting-offsets says (contract.md §8): a fresh
     * start must end up on the highest config and the segments already published, also with a
     * reused --group-id. A job restored from a checkpoint or savepoint goes on from the offsets in
     * its state (the source's splits), never from these.
     */
    public static KafkaSource<ControlRecord> controlSource(
            KafkaSettings c, ControlRecord.Kind kind) {
        String topic =
                kind == ControlRecord.Kind.CONFIG ? c.topics().config() : c.topics().segments();
        var builder = KafkaSource.<ControlRecord>builder();
        KafkaClientConfig.apply(c.clientProperties(), builder::setProperty);
        return builder.setBootstrapServers(c.bootstrapServers())
                .setTopics(topic)
                .setGroupId(c.groupId() + "-" + kind.name().toLowerCase())
                .setStartingOffsets(OffsetsInitializer.earliest())
                .setDeserializer(KeptBytes.control(kind))
                .setProperty("isolation.level", "read_committed")
                .build();
    }

    /**
     * The preferences topic (contract.md §10): compacted, so its records are the users' current
     * choices, and read from its beginning whenever the job starts without state, as the control
     * topics are; a restored job goes on from the offsets in its state.
     */
    public static KafkaSource<RawRecord> preferencesSource(KafkaSettings c) {
        return rawSource(
                c, c.topics().preferences(), "-preferences", OffsetsInitializer.earliest());
    }

    /**
     * The receipts topic (contract.md §11), started where the input topic is (--starting-offsets).
     */
    public static KafkaSource<RawRecord> receiptsSource(KafkaSettings c) {
        return rawSource(c, c.topics().receipts(), "-receipts", inputStart(c));
    }

    private static KafkaSource<RawRecord> rawSource(
            KafkaSettings c, String topic, String groupSuffix, OffsetsInitializer start) {
        var builder = KafkaSource.<RawRecord>builder();
        KafkaClientConfig.apply(c.clientProperties(), builder::setProperty);
        return builder.setBootstrapServers(c.bootstrapServers())
                .setTopics(topic)
                .setGroupId(c.groupId() + groupSuffix)
                .setStartingOffsets(start)
                .setDeserializer(KeptBytes.raw())
                .setProperty("isolation.level", "read_committed")
                .build();
    }

    /** The deliveries' sink: the connector's, with commits Kafka refuses stopping the job. */
    public static Sink<Delivery> deliverySink(KafkaSettings c) {
        return new GuardedKafkaSink<>(
                sink(
                        c,
                        "deliveries",
                        new DeliverySerializer(c.topics().delivery(), c.topics().held())),
                admin(c));
    }

    /** The audit records' sink: the connector's, with commits Kafka refuses stopping the job. */
    public static Sink<AuditEvent> auditSink(KafkaSettings c) {
        return new GuardedKafkaSink<>(
                sink(c, "audit", new AuditSerializer(c.topics().audit(), c.topics().held())),
                admin(c));
    }

    /** An admin client's settings for the job's Kafka. */
    private static Map<String, String> admin(KafkaSettings c) {
        Map<String, String> m = new HashMap<>(c.clientProperties());
        m.put("bootstrap.servers", c.bootstrapServers());
        return m;
    }

    private static <T> KafkaSink<T> sink(
            KafkaSettings c, String name, KafkaRecordSerializationSchema<T> serializer) {
        boolean exactlyOnce = c.exactlyOnce();
        var builder = KafkaSink.<T>builder();
        KafkaClientConfig.apply(c.clientProperties(), builder::setProperty);
        builder.setBootstrapServers(c.bootstrapServers())
                .setRecordSerializer(serializer)
                .setDeliveryGuarantee(
                        exactlyOnce
                                ? DeliveryGuarantee.EXACTLY_ONCE
                                : DeliveryGuarantee.AT_LEAST_ONCE)
                .setProperty(
                        "transaction.timeout.ms", Long.toString(c.transactionTimeout().toMillis()))
                // Bigger batches: fewer produce requests to the broker per record.
                .setProperty("linger.ms", "10")
                .setProperty("batch.size", "262144")
                // Room for the largest record the job writes (--max-record-bytes) with
                // its key, headers and batch framing; past it a send fails the task.
                .setProperty(
                        "max.request.size",
                        Integer.toString(
                                Math.max(1 << 20, c.maxRecordBytes() + MAX_REQUEST_OVERHEAD)));
        if (exactlyOnce) {
            builder.setTransactionalIdPrefix(transactionalIdPrefix(c, name));
        }
        return builder.build();
    }

    /**
     * One prefix per sink and per job: the group id, the sink and its output topic. Two jobs that
     * share a Kafka cluster and a group id but not their output topics (staging and production, two
     * regions) never share a transactional id, so neither can fence or abort the other's
     * transactions. A job restored from a savepoint taken under another prefix (freqcap 0.2's
     * {@code <group>-deliveries}) aborts what the old prefix left open: the connector aborts
     * lingering transactions of the prefixes in its state as well as its own.
     */
    static String transactionalIdPrefix(KafkaSettings c, String name) {
        String topic = name.equals("audit") ? c.topics().audit() : c.topics().delivery();
        return c.groupId() + "-" + name + "@" + topic;
    }

    /**
     * Keeps each record as bytes with its origin, as {@code of} makes it; parsing happens in the
     * job, where errors are audited.
     */
    static final class KeptBytes<T> implements KafkaRecordDeserializationSchema<T> {
        private static final long serialVersionUID = 1L;

        /** The record kept of a consumer record. */
        interface Of<T> extends Serializable {
            T of(ConsumerRecord<byte[], byte[]> r);
        }

        private final Class<T> type;
        private final Of<T> of;

        KeptBytes(Class<T> type, Of<T> of) {
            this.type = type;
            this.of = of;
        }

        static KeptBytes<RawRecord> raw() {
            return new KeptBytes<>(
                    RawRecord.class,
                    r -> new RawRecord(r.key(), r.value(), r.topic(), r.partition(), r.offset()));
        }

        static KeptBytes<ControlRecord> control(ControlRecord.Kind kind) {
            return new KeptBytes<>(
                    ControlRecord.class,
                    r -> new ControlRecord(kind, r.value(), r.topic(), r.partition(), r.offset()));
        }

        @Override
        public void deserialize(ConsumerRecord<byte[], byte[]> r, Collector<T> out) {
            out.collect(of.of(r));
        }

        @Override
        public TypeInformation<T> getProducedType() {
            return TypeInformation.of(type);
        }
    }

    /**
     * The input value byte for byte, the input key, and the decision headers (contract.md §5); a
     * record of the held topic (§12) that rides with the deliveries (a held message's tombstone
     * with its delivery, mostly).
     */
    public static final class DeliverySerializer
            implements KafkaRecordSerializationSchema<Delivery> {
        private static final long serialVersionUID = 1L;
        private final String topic;
        private final String heldTopic;

        /**
         * Header values already encoded: decisions, segment ids and config versions are few, and
         * header arrays are only read by the producer.
         */
        private transient Map<Object, byte[]> encoded;

        /**
         * @param heldTopic --held-topic, or null
         */
        public DeliverySerializer(String topic, String heldTopic) {
            this.topic = topic;
            this.heldTopic = heldTopic;
        }

        @Override
        public ProducerRecord<byte[], byte[]> serialize(
                Delivery d, KafkaSinkContext context, Long timestamp) {
            if (d.isHeldTopic()) {
                return new ProducerRecord<>(held(heldTopic), d.key(), d.value());
            }
            RecordHeaders headers = new RecordHeaders();
            headers.add(Delivery.HEADER_DECISION, encoded(d.decision()));
            headers.add(Delivery.HEADER_SEGMENT, encoded(d.segment()));
            headers.add(Delivery.HEADER_CONFIG_VERSION, encoded(d.configVersion()));
            if (d.shadow() != null) {
                headers.add(Delivery.HEADER_SHADOW, encoded(d.shadow()));
            }
            if (d.sendAt() != null) {
                // Not through the cache: send times are all different.
                headers.add(
                        Delivery.HEADER_SEND_AT,
                        Long.toString(d.sendAt()).getBytes(StandardCharsets.UTF_8));
            }
            return new ProducerRecord<>(topic, null, null, d.key(), d.value(), headers);
        }

        private byte[] encoded(Object value) {
            if (encoded == null || encoded.size() > 4096) {
                encoded = new HashMap<>();
            }
            return encoded.computeIfAbsent(
                    value, v -> v.toString().getBytes(StandardCharsets.UTF_8));
        }
    }

    /** Audit records; and HeldNotices and tombstones for the held topic (contract.md §12). */
    public static final class AuditSerializer
            implements KafkaRecordSerializationSchema<AuditEvent> {
        private static final long serialVersionUID = 1L;
        private final String topic;
        private final String heldTopic;

        /**
         * @param heldTopic --held-topic, or null
         */
        public AuditSerializer(String topic, String heldTopic) {
            this.topic = topic;
            this.heldTopic = heldTopic;
        }

        @Override
        public ProducerRecord<byte[], byte[]> serialize(
                AuditEvent a, KafkaSinkContext context, Long timestamp) {
            return new ProducerRecord<>(a.held() ? held(heldTopic) : topic, a.key(), a.json());
        }
    }

    /** The held topic; the capping task writes none of its records without it. */
    private static String held(String heldTopic) {
        if (heldTopic == null) {
            throw new IllegalStateException("a held topic record without --held-topic");
        }
        return heldTopic;
    }
}
