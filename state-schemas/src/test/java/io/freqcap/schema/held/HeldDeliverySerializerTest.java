package io.freqcap.schema.held;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.decision.Delivery;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

class HeldDeliverySerializerTest {
    static final HeldDeliverySerializer SERIALIZER = HeldDeliverySerializer.INSTANCE;

    static final String VALUE =
            "{\"messageId\":\"m-\u00e9\",\"userId\":42,\"channel\":\"push\","
                    + "\"timestamp\":1763845200000,\"priority\":30}";

    static HeldDelivery held(byte[] key, String shadow) {
        return HeldDelivery.of(
                "m-\u00e9",
                1_763_845_200_000L,
                30,
                7,
                new Delivery(
                        key,
                        VALUE.getBytes(StandardCharsets.UTF_8),
                        "ALLOWED",
                        "vip",
                        9,
                        shadow,
                        1_763_881_200_000L));
    }

    static byte[] write(HeldDelivery h) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        SERIALIZER.serialize(h, out);
        return out.getCopyOfBuffer();
    }

    static HeldDelivery read(byte[] bytes) throws IOException {
        return SERIALIZER.deserialize(new DataInputDeserializer(bytes));
    }

    @Test
    void roundTripsWithAndWithoutKeyAndShadow() throws IOException {
        for (HeldDelivery h : new HeldDelivery[] {held(null, null), held("k".getBytes(), "HELD")}) {
            assertEquals(h, read(write(h)));
        }
        HeldDelivery h = held("42".getBytes(), null);
        Delivery d = read(write(h)).delivery();
        assertEquals(1_763_881_200_000L, d.sendAt());
        assertEquals("ALLOWED", d.decision());
        assertEquals("vip", d.segment());
    }

    /** The layout's start as checkpoints hold it: these bytes must keep reading back. */
    static final String FORMAT_START =
            "02" // format
                    + "046d2de901" // m-é in Flink's string coding (length + 1, then chars)
                    + "0000019aad5dd880" // timestamp
                    + "0000019aaf832980" // sendAt
                    + "ffffffff"; // no key

    @Test
    void formatTwoIsFixedAndAnUnknownFormatIsRefused() throws IOException {
        byte[] bytes = write(held(null, null));
        assertEquals(2, bytes[0]);
        String hex = HexFormat.of().formatHex(bytes);
        assertEquals(FORMAT_START, hex.substring(0, FORMAT_START.length()));
        assertEquals("1e" + "0000000000000007", hex.substring(hex.length() - 18)); // 30, 7
        assertEquals(held(null, null), read(bytes));
        bytes[0] = 3;
        IOException e = assertThrows(IOException.class, () -> read(bytes));
        assertTrue(e.getMessage().contains("format 3"), e.getMessage());
    }

    /**
     * Format 1 (freqcap before contract v4) ends after the shadow word: its priority is the one its
     * value carries, its decision number 0, before anything held since.
     */
    @Test
    void formatOneReadsItsPriorityFromItsValue() throws IOException {
        byte[] two = write(held("k".getBytes(), "HELD"));
        byte[] one = java.util.Arrays.copyOf(two, two.length - 9);
        one[0] = 1;
        HeldDelivery h = read(one);
        assertEquals(30, h.priority());
        assertEquals(0, h.decided());
        assertEquals(held("k".getBytes(), "HELD").decidedAs(0), h);
    }
}
