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

    static HeldDelivery held(byte[] key, String shadow) {
        return HeldDelivery.of(
                "m-\u00e9",
                1_763_845_200_000L,
                new Delivery(
                        key,
                        "{\"messageId\":\"m-\u00e9\"}".getBytes(StandardCharsets.UTF_8),
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

    /** Format 1 as checkpoints hold it: these bytes must keep reading back. */
    static final String FORMAT_1_START =
            "01" // format
                    + "046d2de901" // m-é in Flink's string coding (length + 1, then chars)
                    + "0000019aad5dd880" // timestamp
                    + "0000019aaf832980" // sendAt
                    + "ffffffff"; // no key

    @Test
    void formatOneIsFixedAndAnUnknownFormatIsRefused() throws IOException {
        byte[] bytes = write(held(null, null));
        assertEquals(1, bytes[0]);
        String hex = HexFormat.of().formatHex(bytes);
        assertEquals(FORMAT_1_START, hex.substring(0, FORMAT_1_START.length()));
        assertEquals(held(null, null), read(bytes));
        bytes[0] = 2;
        IOException e = assertThrows(IOException.class, () -> read(bytes));
        assertTrue(e.getMessage().contains("format 2"), e.getMessage());
    }
}
