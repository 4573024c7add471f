package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.freqcap.schema.decision.Delivery;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

class DeliverySerializerTest {
    private final KafkaConnectors.DeliverySerializer serializer =
            new KafkaConnectors.DeliverySerializer("deliveries", "held-messages");

    private static String header(ProducerRecord<byte[], byte[]> r, String name) {
        return new String(r.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }

    @Test
    void everyRecordCarriesItsOwnDecisionSegmentAndVersion() {
        byte[] value = "{\"messageId\":\"m1\"}".getBytes(StandardCharsets.UTF_8);
        // Segment "7" and version 7 look alike once encoded; each must stay itself.
        Object[][] cases = {
            {"ALLOWED", "new", 7L}, {"EXEMPT", "7", 8L}, {"ALLOWED", "*", 7L}, {"ALLOWED", "7", 7L}
        };
        for (Object[] c : cases) {
            Delivery d =
                    new Delivery(
                            "k".getBytes(),
                            value,
                            (String) c[0],
                            (String) c[1],
                            (long) c[2],
                            null,
                            null);
            ProducerRecord<byte[], byte[]> r = serializer.serialize(d, null, null);
            assertEquals("deliveries", r.topic());
            assertArrayEquals(value, r.value());
            assertArrayEquals("k".getBytes(), r.key());
            assertEquals(c[0], header(r, Delivery.HEADER_DECISION));
            assertEquals(c[1], header(r, Delivery.HEADER_SEGMENT));
            assertEquals(Long.toString((long) c[2]), header(r, Delivery.HEADER_CONFIG_VERSION));
            assertEquals(3, r.headers().toArray().length);
        }
    }

    /** A held message's tombstone rides the delivery sink to the held topic, without headers. */
    @Test
    void aHeldTombstoneGoesToTheHeldTopicWithoutValueOrHeaders() {
        byte[] key = "42/m-\ud83d\ude00".getBytes(StandardCharsets.UTF_8);
        ProducerRecord<byte[], byte[]> r =
                serializer.serialize(Delivery.heldTopic(key, null), null, null);
        assertEquals("held-messages", r.topic());
        assertArrayEquals(key, r.key());
        assertEquals(null, r.value());
        assertEquals(0, r.headers().toArray().length);
        // And an audit-sink record marked held goes there too; others stay in the audit topic.
        var audit = new KafkaConnectors.AuditSerializer("capping-audit", "held-messages");
        assertEquals(
                "held-messages",
                audit.serialize(io.freqcap.schema.decision.AuditEvent.held(key, null), null, null)
                        .topic());
        assertEquals(
                "capping-audit",
                audit.serialize(
                                io.freqcap.schema.decision.AuditEvent.audit(key, new byte[] {'{'}),
                                null,
                                null)
                        .topic());
    }
}
