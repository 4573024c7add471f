package io.freqcap.schema.message;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.regex.Pattern;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

class InboundMessageSerializerTest {
    private static InboundMessage roundTrip(InboundMessage m) throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(64);
        InboundMessageSerializer.INSTANCE.serialize(m, out);
        InboundMessageSerializer.INSTANCE.serialize(m, out); // two in a row: lengths are right
        DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
        InboundMessageSerializer.INSTANCE.deserialize(in);
        InboundMessage back = InboundMessageSerializer.INSTANCE.deserialize(in);
        assertEquals(0, in.available());
        return back;
    }

    private static void assertSameFields(InboundMessage want, InboundMessage got) {
        assertEquals(want.routingKey(), got.routingKey());
        assertEquals(want.messageId(), got.messageId());
        assertEquals(want.channel(), got.channel());
        assertEquals(want.category(), got.category());
        assertEquals(want.timestamp(), got.timestamp());
        assertEquals(want.error(), got.error());
        assertArrayEquals(want.key(), got.key());
        assertArrayEquals(want.value(), got.value());
        assertEquals(want.timezone(), got.timezone());
        assertEquals(want.campaignId(), got.campaignId());
        assertEquals(want.priority(), got.priority());
        assertEquals(want, got);
        assertEquals(want.topic(), got.topic());
        assertEquals(want.partition(), got.partition());
        assertEquals(want.offset(), got.offset());
    }

    @Test
    void parsedAndMalformedRecordsComeBackFieldForField() throws Exception {
        byte[] json =
                ("{\"messageId\":\"m-ü1\",\"userId\":42,\"channel\":\"push\",\"timestamp\":7,"
                                + "\"timezone\":\"Europe/Berlin\",\"campaignId\":7,\"priority\":80}")
                        .getBytes(StandardCharsets.UTF_8);
        InboundMessage parsed = InboundMessage.of(new RawRecord("k".getBytes(), json, "in", 3, 99));
        assertEquals(null, parsed.error());
        assertEquals("Europe/Berlin", parsed.timezone());
        assertEquals("7", parsed.campaignId());
        assertEquals(80, parsed.priority());
        assertEquals(80, parsed.message().priority());
        assertSameFields(parsed, roundTrip(parsed));

        InboundMessage malformed =
                InboundMessage.of(new RawRecord(null, "{oops".getBytes(), "in", 1, 5));
        assertEquals(null, malformed.messageId());
        assertSameFields(malformed, roundTrip(malformed));

        InboundMessage tombstone = InboundMessage.of(new RawRecord(new byte[0], null, "in", 0, 6));
        assertSameFields(tombstone, roundTrip(tombstone));

        // records of the preferences and receipts topics keep their kind on the way
        InboundMessage preference =
                io.freqcap.schema.preference.PreferenceRecord.inbound(
                        new RawRecord("42".getBytes(), null, "user-preferences", 0, 7));
        assertEquals(42, preference.routingKey());
        assertEquals(InboundMessage.Kind.PREFERENCE, roundTrip(preference).kind());
        assertSameFields(preference, roundTrip(preference));
        InboundMessage receipt =
                io.freqcap.schema.receipt.DeliveryReceipt.inbound(
                        new RawRecord(null, "{oops".getBytes(), "delivery-receipts", 0, 8));
        assertTrue(receipt.routingKey() < 0, "unreadable: under a negative key");
        assertEquals(InboundMessage.Kind.RECEIPT, roundTrip(receipt).kind());
    }

    @Test
    void flinkPicksThisSerializerForInboundMessage() {
        TypeInformation<InboundMessage> info = TypeInformation.of(InboundMessage.class);
        assertSame(
                InboundMessageSerializer.INSTANCE,
                info.createSerializer(
                        new org.apache.flink.api.common.ExecutionConfig().getSerializerConfig()));
    }

    @Test
    void channelCheckAgreesWithThePattern() {
        Pattern channel = OutboundMessage.CHANNEL;
        Random rnd = new Random(3);
        String alphabet = "az09_-AZ.é ";
        for (int i = 0; i < 20_000; i++) {
            StringBuilder s = new StringBuilder();
            int n = rnd.nextInt(36);
            for (int j = 0; j < n; j++) {
                s.append(alphabet.charAt(rnd.nextInt(alphabet.length())));
            }
            String c = s.toString();
            assertEquals(channel.matcher(c).matches(), OutboundMessage.isChannelName(c), c);
        }
        assertEquals(true, OutboundMessage.isChannelName("a".repeat(32)));
        assertEquals(false, OutboundMessage.isChannelName("a".repeat(33)));
        assertEquals(false, OutboundMessage.isChannelName(""));
    }
}
