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
                new io.freqcap.schema.message.OutboundMessage(
                        "m-\u00e9", 42, "push", "marketing", 1_763_845_200_000L, null, null, 30),
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
            "04" // format
                    + "046d2de901" // m-é in Flink's string coding (length + 1, then chars)
                    + "0000019aad5dd880" // timestamp
                    + "0000019aaf832980" // sendAt
                    + "ffffffff"; // no key

    /** Format 3's tail: userId 42, channel push, category marketing, no campaign. */
    static final String FORMAT_3_TAIL =
            "1e" // priority 30
                    + "0000000000000007" // decided
                    + "000000000000002a" // userId
                    + "0570757368" // push
                    + "0a6d61726b6574696e67" // marketing
                    + "00"; // no campaign

    /** Format 4's tail: nothing said of what held it (a message held by 0.4 or a test's). */
    static final String FORMAT_4_TAIL =
            "ffffffff" // no heldBy
                    + "00"; // no zone

    /** The bytes of {@code h} as format 3 wrote them: format 4's without its tail. */
    static byte[] formatThree(HeldDelivery h) throws IOException {
        byte[] four = write(h);
        byte[] three = java.util.Arrays.copyOf(four, four.length - FORMAT_4_TAIL.length() / 2);
        three[0] = 3;
        return three;
    }

    @Test
    void formatFourIsFixedAndAnUnknownFormatIsRefused() throws IOException {
        byte[] bytes = write(held(null, null));
        assertEquals(4, bytes[0]);
        String hex = HexFormat.of().formatHex(bytes);
        assertEquals(FORMAT_START, hex.substring(0, FORMAT_START.length()));
        String tail = FORMAT_3_TAIL + FORMAT_4_TAIL;
        assertEquals(tail, hex.substring(hex.length() - tail.length()));
        assertEquals(held(null, null), read(bytes));
        HeldDelivery campaign =
                HeldDelivery.of(
                        new io.freqcap.schema.message.OutboundMessage(
                                "m", 7, "sms", "Weekly Newsletter", 5, null, "spring-sale", 0),
                        1,
                        new Delivery(null, new byte[] {'{', '}'}, "ALLOWED", "*", 1, null, 9L));
        assertEquals(campaign, read(write(campaign)));
        assertEquals("spring-sale", read(write(campaign)).message().campaignId());
        bytes[0] = 5;
        IOException e = assertThrows(IOException.class, () -> read(bytes));
        assertTrue(e.getMessage().contains("format 5"), e.getMessage());
    }

    /** What held a message and its zone round-trip, astral characters and an empty array too. */
    @Test
    void whatHeldItAndItsZoneRoundTrip() throws IOException {
        HeldDelivery plain = held("42".getBytes(), null);
        for (String heldBy : new String[] {"[]", "[{\"scope\":\"campaign:\ud83d\ude00\"}]"}) {
            HeldDelivery h =
                    HeldDelivery.of(
                            plain.message(),
                            3,
                            plain.delivery(),
                            heldBy.getBytes(StandardCharsets.UTF_8),
                            "Europe/Berlin");
            HeldDelivery back = read(write(h));
            assertEquals(h, back);
            assertEquals(heldBy, new String(back.heldBy(), StandardCharsets.UTF_8));
            assertEquals("Europe/Berlin", back.timezone());
        }
    }

    /** Format 3 (before HeldNotices) ends after the campaign: nothing says what held it. */
    @Test
    void formatThreeReadsWithoutWhatHeldIt() throws IOException {
        HeldDelivery h = read(formatThree(held("k".getBytes(), "HELD")));
        assertEquals(held("k".getBytes(), "HELD"), h);
        assertEquals(null, h.heldBy());
        assertEquals(null, h.timezone());
    }

    /** Format 2 (contract v4) ends after the decision number: the rest is read from its value. */
    @Test
    void formatTwoReadsWhatWithdrawingNeedsFromItsValue() throws IOException {
        byte[] three = formatThree(held("k".getBytes(), "HELD"));
        // Without userId, channel, category and campaign: all but priority and decided.
        byte[] two =
                java.util.Arrays.copyOf(three, three.length - (FORMAT_3_TAIL.length() / 2 - 9));
        two[0] = 2;
        HeldDelivery h = read(two);
        assertEquals(held("k".getBytes(), "HELD"), h);
    }

    /**
     * Format 1 (freqcap before contract v4) ends after the shadow word: its priority is the one its
     * value carries, its decision number 0, before anything held since.
     */
    @Test
    void formatOneReadsItsPriorityFromItsValue() throws IOException {
        byte[] three = formatThree(held("k".getBytes(), "HELD"));
        byte[] one = java.util.Arrays.copyOf(three, three.length - FORMAT_3_TAIL.length() / 2);
        one[0] = 1;
        HeldDelivery h = read(one);
        assertEquals(30, h.message().priority());
        assertEquals(0, h.decided());
        assertEquals(held("k".getBytes(), "HELD").decidedAs(0), h);
    }

    /**
     * freqcap 0.3 held what this version refuses ({@code "priority": "high"}, an unknown field
     * then): it reads as priority 0, and what withdrawing it needs is still there.
     */
    @Test
    void aHeldValueOfFreqcap03WithPriorityHighReadsWithoutThrowing() throws IOException {
        byte[] value =
                ("{\"messageId\":\"m-1\",\"userId\":42,\"channel\":\"sms\",\"category\":"
                                + "\"promo\",\"campaignId\":\"spring\",\"timestamp\":5,"
                                + "\"priority\":\"high\",\"timezone\":\"Mars/Olympus\"}")
                        .getBytes(StandardCharsets.UTF_8);
        HeldDelivery three =
                HeldDelivery.of(
                        new io.freqcap.schema.message.OutboundMessage(
                                "m-1", 42, "sms", "promo", 5, null, "spring", 0),
                        0,
                        new Delivery("42".getBytes(), value, "ALLOWED", "*", 1, null, 9L));
        byte[] bytes = formatThree(three);
        byte[] one = java.util.Arrays.copyOf(bytes, bytes.length - 9 - (8 + 4 + 6 + 1 + 7));
        one[0] = 1;
        HeldDelivery h = read(one);
        assertEquals(0, h.message().priority());
        assertEquals("sms", h.message().channel());
        assertEquals("promo", h.message().category());
        assertEquals("spring", h.message().campaignId());
        assertEquals(42, h.message().userId());
        assertEquals("m-1", h.message().messageId());
    }
}
