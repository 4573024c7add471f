package io.freqcap.schema.message;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.common.MalformedRecordException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class OutboundMessageTest {
    static final String VALID =
            "{\"messageId\": \"m-000017\", \"userId\": 42, \"channel\": \"push\","
                    + " \"category\": \"marketing\", \"campaignId\": \"spring-sale\","
                    + " \"timestamp\": 1763798400000, \"payload\": {\"title\": \"...\"}}";

    static OutboundMessage parse(String json) throws MalformedRecordException {
        return OutboundMessage.parse(json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void readsTheContractExample() throws Exception {
        assertEquals(
                new OutboundMessage(
                        "m-000017",
                        42,
                        "push",
                        "marketing",
                        1763798400000L,
                        null,
                        "spring-sale",
                        0),
                parse(VALID));
    }

    @Test
    void readsTimeZoneAndCampaignOfEitherType() throws Exception {
        String base = "{\"messageId\":\"a\",\"userId\":1,\"channel\":\"sms\",\"timestamp\":0";
        OutboundMessage m =
                parse(base + ",\"timezone\":\"Asia/Kolkata\",\"campaignId\":12345678901234567890}");
        assertEquals("Asia/Kolkata", m.timezone());
        assertEquals("12345678901234567890", m.campaignId(), "an integer is its decimal text");
        OutboundMessage none = parse(base + ",\"timezone\":null,\"campaignId\":null}");
        assertEquals(null, none.timezone());
        assertEquals(null, none.campaignId());
        assertEquals("UTC", parse(base + ",\"timezone\":\"UTC\"}").timezone());
        assertEquals("-7", parse(base + ",\"campaignId\":-7}").campaignId());
    }

    @Test
    void missingOrNullCategoryIsMarketing() throws Exception {
        assertEquals(
                "marketing",
                parse("{\"messageId\":\"a\",\"userId\":1,\"channel\":\"sms\",\"timestamp\":0}")
                        .category());
        assertEquals(
                "marketing",
                parse(
                                "{\"messageId\":\"a\",\"userId\":1,\"channel\":\"sms\",\"timestamp\":0,"
                                        + "\"category\":null}")
                        .category());
    }

    @Test
    void acceptsTheLargestUserIdAndUnknownFields() throws Exception {
        OutboundMessage m =
                parse(
                        "{\"x\":[1,{\"y\":2}],\"messageId\":\"a\",\"userId\":9223372036854775807,"
                                + "\"channel\":\"in_app-2\",\"timestamp\":5}");
        assertEquals(Long.MAX_VALUE, m.userId());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "userId as float      | {\"messageId\":\"a\",\"userId\":42.0,\"channel\":\"push\",\"timestamp\":1} | userId: expected an integer, got 42.0",
                "userId as string     | {\"messageId\":\"a\",\"userId\":\"42\",\"channel\":\"push\",\"timestamp\":1} | userId: expected an integer, got \"42\"",
                "userId negative      | {\"messageId\":\"a\",\"userId\":-1,\"channel\":\"push\",\"timestamp\":1} | userId: must not be negative, got -1",
                "userId too large     | {\"messageId\":\"a\",\"userId\":9223372036854775808,\"channel\":\"push\",\"timestamp\":1} | userId: out of range 0..2^63-1, got 9223372036854775808",
                "userId missing       | {\"messageId\":\"a\",\"channel\":\"push\",\"timestamp\":1} | userId: required field is missing",
                "userId null          | {\"messageId\":\"a\",\"userId\":null,\"channel\":\"push\",\"timestamp\":1} | userId: expected an integer, got null",
                "messageId empty      | {\"messageId\":\"\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1} | messageId: must be 1..128 characters, got 0",
                "messageId number     | {\"messageId\":7,\"userId\":1,\"channel\":\"push\",\"timestamp\":1} | messageId: expected a string, got 7",
                "channel upper case   | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"Push\",\"timestamp\":1} | channel: must match [a-z0-9_-]{1,32}, got \"Push\"",
                "channel missing      | {\"messageId\":\"a\",\"userId\":1,\"timestamp\":1} | channel: required field is missing",
                "timestamp negative   | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":-5} | timestamp: must not be negative, got -5",
                "timestamp as text    | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":\"now\"} | timestamp: expected an integer, got \"now\"",
                "timestamp as float   | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":42.0} | timestamp: expected an integer, got 42.0",
                "timestamp as digits  | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":\"42\"} | timestamp: expected an integer, got \"42\"",
                "category as number   | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1,\"category\":3} | category: expected a string, got 3",
                "unknown zone         | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1,\"timezone\":\"Mars/Olympus\"} | timezone: not a time-zone id this job knows, got \"Mars/Olympus\"",
                "zone as offset       | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1,\"timezone\":\"+05:30\"} | timezone: not a time-zone id this job knows",
                "zone as number       | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1,\"timezone\":8} | timezone: expected a string, got 8",
                "campaign as float    | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1,\"campaignId\":1.5} | campaignId: expected a string or an integer, got 1.5",
                "campaign as boolean  | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1,\"campaignId\":true} | campaignId: expected a string or an integer",
                "campaign as object   | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1,\"campaignId\":{}} | campaignId: expected a string or an integer",
                "campaign empty       | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1,\"campaignId\":\"\"} | campaignId: must be 1..128 characters, got 0",
                "priority over 100    | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1,\"priority\":101} | priority: expected an integer 0..100, got 101",
                "priority negative    | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1,\"priority\":-1} | priority: expected an integer 0..100, got -1",
                "priority as text     | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1,\"priority\":\"80\"} | priority: expected an integer 0..100, got \"80\"",
                "priority as float    | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1,\"priority\":80.0} | priority: expected an integer 0..100, got 80.0",
                "priority huge        | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1,\"priority\":99999999999999999999} | priority: expected an integer 0..100",
                "trailing bytes       | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1} x | not valid JSON",
                "two objects          | {\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1}{} | trailing bytes after the JSON object",
                "array                | [1] | expected a JSON object, got an array",
                "truncated            | {\"messageId\":\"a\",\"userId\":1 | not valid JSON",
                "duplicate key        | {\"messageId\":\"a\",\"userId\":1,\"userId\":2,\"channel\":\"push\",\"timestamp\":1} | not valid JSON: Duplicate field 'userId'",
            })
    void rejectsWithFieldAndReason(String name, String json, String error) {
        MalformedRecordException e =
                assertThrows(MalformedRecordException.class, () -> parse(json));
        assertTrue(e.getMessage().startsWith(error), name + ": " + e.getMessage());
    }

    @Test
    void priorityIsZeroUnlessGivenAndTravelsWithTheMessage() throws Exception {
        String base = "{\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1";
        assertEquals(0, parse(base + "}").priority());
        assertEquals(0, parse(base + ",\"priority\":null}").priority());
        assertEquals(0, parse(base + ",\"priority\":0}").priority());
        assertEquals(100, parse(base + ",\"priority\":100}").priority());
        assertEquals(80, parse(base + ",\"priority\":80}").at(5).priority(), "a held one too");
    }

    @Test
    void messageIdOf129CharactersIsMalformed() {
        String id = "x".repeat(129);
        MalformedRecordException e =
                assertThrows(
                        MalformedRecordException.class,
                        () ->
                                parse(
                                        "{\"messageId\":\""
                                                + id
                                                + "\",\"userId\":1,\"channel\":\"push\",\"timestamp\":1}"));
        assertEquals("messageId: must be 1..128 characters, got 129", e.getMessage());
    }

    @Test
    void categoryOf1To64CharactersOnly() throws Exception {
        String ok = "c".repeat(64);
        assertEquals(
                ok,
                parse(
                                "{\"messageId\":\"a\",\"userId\":1,\"channel\":\"push\","
                                        + "\"timestamp\":1,\"category\":\""
                                        + ok
                                        + "\"}")
                        .category());
        for (String bad : List.of("", "c".repeat(65), "c".repeat(1_000_000))) {
            MalformedRecordException e =
                    assertThrows(
                            MalformedRecordException.class,
                            () ->
                                    parse(
                                            "{\"messageId\":\"a\",\"userId\":1,\"channel\":"
                                                    + "\"push\",\"timestamp\":1,\"category\":\""
                                                    + bad
                                                    + "\"}"));
            assertEquals("category: must be 1..64 characters, got " + bad.length(), e.getMessage());
        }
    }

    @Test
    void aTimestampMoreThanMaxFutureAfterTheClockIsMalformed() {
        long now = 1_795_600_000_000L;
        String json = "{\"messageId\":\"a\",\"userId\":77,\"channel\":\"push\",\"timestamp\":%d}";
        RawRecord atLimit =
                new RawRecord(null, String.format(json, now + 86_400_000L).getBytes(), "in", 0, 1);
        assertFalse(InboundMessage.of(atLimit, 1 << 20, FutureBound.ONE_DAY, now).isMalformed());
        long micros = now * 1000; // a unit mistake: year ~58,000
        RawRecord bad = new RawRecord(null, String.format(json, micros).getBytes(), "in", 0, 2);
        InboundMessage in = InboundMessage.of(bad, 1 << 20, FutureBound.ONE_DAY, now);
        assertEquals("timestamp " + micros + " is more than 1d after the job's clock", in.error());
        // off takes any time before the year 10000; microseconds lie far past it
        assertEquals(
                "timestamp: after the year 9999, got " + micros,
                InboundMessage.of(bad, 1 << 20, FutureBound.OFF, now).error());
        RawRecord lastInstant =
                new RawRecord(
                        null,
                        String.format(json, OutboundMessage.LAST_YEAR_END - 1).getBytes(),
                        "in",
                        0,
                        3);
        assertFalse(InboundMessage.of(lastInstant, 1 << 20, FutureBound.OFF, now).isMalformed());
        assertTrue(
                InboundMessage.of(bad, 1 << 20, FutureBound.parse("30m"), micros - 1_800_001)
                        .isMalformed());
        assertThrows(IllegalArgumentException.class, () -> FutureBound.parse("0d"));
        assertThrows(IllegalArgumentException.class, () -> FutureBound.parse("1 day"));
    }

    @Test
    void tombstoneAndGarbageAreMalformed() {
        assertEquals(
                "record has no value (tombstone)",
                assertThrows(MalformedRecordException.class, () -> OutboundMessage.parse(null))
                        .getMessage());
        assertThrows(
                MalformedRecordException.class,
                () -> OutboundMessage.parse(new byte[] {(byte) 0xff, 0x00, 0x7b}));
        assertThrows(MalformedRecordException.class, () -> OutboundMessage.parse(new byte[0]));
    }

    @Test
    void aValueInUtf16OrUtf32IsMalformedThoughTheJsonReaderWouldTakeIt() {
        String json = "{\"messageId\":\"m\",\"userId\":42,\"channel\":\"push\",\"timestamp\":0}";
        for (java.nio.charset.Charset cs :
                java.util.List.of(
                        java.nio.charset.StandardCharsets.UTF_16LE,
                        java.nio.charset.StandardCharsets.UTF_16BE,
                        java.nio.charset.StandardCharsets.UTF_16,
                        java.nio.charset.Charset.forName("UTF-32LE"))) {
            org.junit.jupiter.api.Assertions.assertThrows(
                    io.freqcap.schema.common.MalformedRecordException.class,
                    () -> OutboundMessage.parse(json.getBytes(cs)),
                    cs.name());
        }
    }
}
