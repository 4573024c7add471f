package io.freqcap.schema.decision;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.SharedFiles;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.message.OutboundMessage;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

class AuditRecordsTest {
    static byte[] example(String name) throws Exception {
        return SharedFiles.read("contract/examples/" + name);
    }

    /**
     * The audit record (config version 7, at most {@code maxBytes}) of {@code message} rejected in
     * {@code segment} by the one limit of {@code max} a day, reached.
     */
    static AuditEvent rejected(
            String segment, int max, Long retryAfter, byte[] message, int maxBytes)
            throws Exception {
        return AuditRecords.decision(
                Verdict.rejected(
                        segment, List.of(Violations.rolling("all", "1d", max, max)), retryAfter),
                OutboundMessage.parse(message),
                7,
                message,
                maxBytes);
    }

    @Test
    void rejectedRecordEqualsTheContractExample() throws Exception {
        byte[] message = example("outbound-message.json");
        AuditEvent e = rejected("new", 2, 1763841600000L, message, AuditRecords.DEFAULT_MAX_BYTES);

        assertEquals(
                Json.MAPPER.readTree(example("audit-rejected.json")),
                Json.MAPPER.readTree(e.json()));
        assertEquals("42", new String(e.key(), StandardCharsets.UTF_8));
    }

    @Test
    void aCalendarViolationNamesItsPeriodAndAReservingOneItsReservedPlaces() throws Exception {
        OutboundMessage m = OutboundMessage.parse(example("outbound-message.json"));
        AuditEvent e =
                AuditRecords.decision(
                        Verdict.rejected(
                                "new",
                                List.of(
                                        Violations.calendar("all", "day", 2, 2),
                                        Violations.rolling("campaign:spring-sale", "3d", 1, 1),
                                        // a limit keeping a place from the message says so
                                        Violations.reserved("all", "1d", 3, 2, 1)),
                                1763827200000L),
                        m,
                        8,
                        example("outbound-message.json"),
                        AuditRecords.DEFAULT_MAX_BYTES);
        var violations = Json.MAPPER.readTree(e.json()).get("violations");
        assertEquals(
                Json.MAPPER.readTree(
                        "[{\"scope\":\"all\",\"calendar\":\"day\",\"max\":2,\"count\":2},"
                                + "{\"scope\":\"campaign:spring-sale\",\"window\":\"3d\",\"max\":1,"
                                + "\"count\":1},"
                                + "{\"scope\":\"all\",\"window\":\"1d\",\"max\":3,\"reserved\":1,"
                                + "\"count\":2}]"),
                violations);
    }

    @Test
    void aRecordTooLargeForItsViolationsKeepsTheFirstThatFitAndNeverPassesTheBound()
            throws Exception {
        OutboundMessage m = new OutboundMessage("m1", 42, "push", "marketing", 1763841600000L);
        byte[] message =
                "{\"messageId\":\"m1\",\"userId\":42,\"channel\":\"push\",\"timestamp\":1763841600000}"
                        .getBytes(StandardCharsets.UTF_8);
        List<Violation> many = new java.util.ArrayList<>();
        for (int i = 0; i < 25_000; i++) {
            many.add(Violations.rolling("all", (61 + i) + "m", 1, 1));
        }
        ShadowDecision shadow = new ShadowDecision(Decision.REJECTED, "*", many, null);
        for (int max : List.of(AuditRecords.DEFAULT_MAX_BYTES, 8192, AuditRecords.MIN_MAX_BYTES)) {
            AuditEvent e =
                    AuditRecords.decision(
                            Verdict.rejected("*", many, null).withShadow(shadow),
                            m,
                            2,
                            message,
                            max);
            assertTrue(e.json().length <= max, e.json().length + " > " + max);
            JsonNode json = Json.MAPPER.readTree(e.json());
            assertEquals("REJECTED", json.get("decision").asText());
            assertTrue(json.get("violationsTruncated").asBoolean());
            assertEquals(25_000, json.get("violationsTotal").asInt());
            assertEquals("61m", json.get("violations").get(0).get("window").asText());
        }
        // Within the bound nothing changes.
        AuditEvent few =
                AuditRecords.decision(
                        Verdict.rejected("*", many.subList(0, 3), null),
                        m,
                        2,
                        message,
                        AuditRecords.DEFAULT_MAX_BYTES);
        JsonNode json = Json.MAPPER.readTree(few.json());
        assertEquals(3, json.get("violations").size());
        assertNull(json.get("violationsTruncated"));
    }

    @Test
    void everyRecordWithItsIdsAtTheirBoundsFitsTheSmallestBoundWithItsKey() throws Exception {
        String id = "\uD83D\uDE00".repeat(128);
        String segment = "\uD83D\uDE00".repeat(64);
        OutboundMessage m =
                new OutboundMessage(
                        id, Long.MAX_VALUE, "z".repeat(32), "marketing", Long.MAX_VALUE);
        byte[] raw = ("{\"messageId\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8);
        List<Violation> many = new java.util.ArrayList<>();
        for (int i = 0; i < 40; i++) {
            many.add(Violations.rolling("campaign:" + id, "90d", 1_000_000, 1_000_000));
        }
        int max = AuditRecords.MIN_MAX_BYTES;
        List<Verdict> verdicts =
                List.of(
                        Verdict.rejected(segment, many, Long.MAX_VALUE)
                                .withShadow(
                                        new ShadowDecision(Decision.REJECTED, segment, many, null)),
                        Verdict.preempted(
                                segment,
                                Long.MAX_VALUE,
                                id,
                                "preempted by " + id + " (priority 100 over 99)"),
                        Verdict.cancelled(segment, Long.MAX_VALUE, "opted out of category " + id));
        for (Verdict v : verdicts) {
            AuditEvent e = AuditRecords.decision(v, m, Long.MAX_VALUE, raw, max);
            assertTrue(
                    e.json().length + e.key().length <= max,
                    v.decision()
                            + " "
                            + e.json().length
                            + " > "
                            + max
                            + new String(e.json(), StandardCharsets.UTF_8).substring(0, 300));
            Json.MAPPER.readTree(e.json());
        }
        String error = "x: " + "\uD83D\uDE00".repeat(5000);
        AuditEvent bad =
                AuditRecords.unreadable(
                        Decision.INVALID_CONTROL,
                        error,
                        raw,
                        "t".repeat(249),
                        0,
                        Long.MAX_VALUE,
                        max);
        assertTrue(bad.json().length <= max, bad.json().length + " > " + max);
        String shown = Json.MAPPER.readTree(bad.json()).get("error").asText();
        assertTrue(shown.endsWith("\uD83D\uDE00..."), "cut between code points: " + shown);
    }

    @Test
    void halfASurrogatePairIsWrittenEscapedNeverJoinedWithTheNextCharacter() throws Exception {
        // A config's segment id is not checked for it; astral characters are 4 bytes of UTF-8.
        String segment = "a\uD800\"b\uD83D\uDE00";
        OutboundMessage m = new OutboundMessage("m1", 42, "push", "marketing", 1763841600000L);
        AuditEvent e =
                AuditRecords.decision(
                        Verdict.rejected(segment, List.of(), null),
                        m,
                        1,
                        "{\"messageId\":\"m1\"}".getBytes(StandardCharsets.UTF_8),
                        AuditRecords.DEFAULT_MAX_BYTES);
        assertEquals(segment, Json.MAPPER.readTree(e.json()).get("segment").asText());
        assertTrue(
                new String(e.json(), StandardCharsets.UTF_8).toLowerCase().contains("\\ud800"),
                "written escaped");
    }

    @Test
    void malformedRecordEqualsTheContractExample() throws Exception {
        byte[] raw = "{\"messageId\":\"x\",\"userId\":\"abc\"}".getBytes(StandardCharsets.UTF_8);
        AuditEvent e =
                AuditRecords.unreadable(
                        Decision.MALFORMED,
                        "userId: expected an integer, got \"abc\"",
                        raw,
                        "outbound-messages",
                        3,
                        1287,
                        AuditRecords.DEFAULT_MAX_BYTES);

        assertEquals(
                Json.MAPPER.readTree(example("audit-malformed.json")),
                Json.MAPPER.readTree(e.json()));
        assertNull(e.key());
    }

    @Test
    void rawBytesThatAreNotTextSurviveBase64() throws Exception {
        byte[] raw = {(byte) 0xff, 0, 10, (byte) 0x80};
        JsonNode audit =
                Json.MAPPER.readTree(
                        AuditRecords.unreadable(
                                        Decision.MALFORMED,
                                        "not valid JSON",
                                        raw,
                                        "t",
                                        0,
                                        5,
                                        AuditRecords.DEFAULT_MAX_BYTES)
                                .json());
        assertEquals(
                HexOf.bytes(raw),
                HexOf.bytes(Base64.getDecoder().decode(audit.get("raw").asText())));
    }

    @Test
    void tombstoneHasNullRaw() throws Exception {
        JsonNode audit =
                Json.MAPPER.readTree(
                        AuditRecords.unreadable(
                                        Decision.MALFORMED,
                                        "record has no value (tombstone)",
                                        null,
                                        "t",
                                        0,
                                        5,
                                        AuditRecords.DEFAULT_MAX_BYTES)
                                .json());
        assertEquals(true, audit.get("raw").isNull());
    }

    @Test
    void noRetryTimeIsJsonNull() throws Exception {
        byte[] message = example("outbound-message.json");
        JsonNode audit =
                Json.MAPPER.readTree(
                        rejected("*", 0, null, message, AuditRecords.DEFAULT_MAX_BYTES).json());
        assertTrue(audit.has("retryAfter"), "present");
        assertTrue(audit.get("retryAfter").isNull(), "and null, not 0: " + audit);
    }

    @Test
    void largeMalformedInputIsCutToTheBound() throws Exception {
        byte[] raw = new byte[900_000];
        new java.util.Random(7).nextBytes(raw);
        AuditEvent e =
                AuditRecords.unreadable(
                        Decision.MALFORMED,
                        "record too large: 900000 bytes, over --max-record-bytes 100000",
                        raw,
                        "outbound-messages",
                        3,
                        981233,
                        100_000);
        assertTrue(e.json().length <= 100_000, e.json().length + " bytes");
        assertTrue(e.json().length > 99_000, "uses the room it has: " + e.json().length);
        JsonNode audit = Json.MAPPER.readTree(e.json());
        assertEquals(900_000, audit.get("rawBytes").asInt());
        assertTrue(audit.get("rawTruncated").asBoolean());
        byte[] prefix = Base64.getDecoder().decode(audit.get("raw").asText());
        assertEquals(HexOf.bytes(java.util.Arrays.copyOf(raw, prefix.length)), HexOf.bytes(prefix));
        assertEquals(981233, audit.get("source").get("offset").asLong());
        assertEquals(
                fieldNames(Json.MAPPER.readTree(example("audit-malformed-too-large.json"))),
                fieldNames(audit),
                "the contract's example has the same fields in the same order");
    }

    @Test
    void aRecordThatFitsIsWhole() throws Exception {
        byte[] raw = new byte[74_000]; // base64: 98,668 bytes
        JsonNode audit =
                Json.MAPPER.readTree(
                        AuditRecords.unreadable(
                                        Decision.INVALID_CONTROL, "e", raw, "t", 0, 5, 100_000)
                                .json());
        assertEquals(74_000, Base64.getDecoder().decode(audit.get("raw").asText()).length);
        assertNull(audit.get("rawTruncated"));
    }

    @Test
    void decisionWithTooLargeMessageLeavesItOut() throws Exception {
        String payload = "x".repeat(5_000);
        byte[] message =
                ("{\"messageId\":\"m1\",\"userId\":42,\"channel\":\"push\","
                                + "\"timestamp\":1763798400000,\"payload\":\""
                                + payload
                                + "\"}")
                        .getBytes(StandardCharsets.UTF_8);
        AuditEvent e = rejected("*", 2, 1763841600000L, message, 2_000);
        assertTrue(e.json().length <= 2_000, e.json().length + " bytes");
        JsonNode audit = Json.MAPPER.readTree(e.json());
        assertNull(audit.get("message"));
        assertEquals(message.length, audit.get("rawBytes").asInt());
        assertEquals("REJECTED", audit.get("decision").asText());
        assertEquals(2, audit.get("violations").get(0).get("count").asInt());
        String start = new String(Base64.getDecoder().decode(audit.get("raw").asText()));
        assertTrue(start.startsWith("{\"messageId\":\"m1\""), start);
    }

    @Test
    void longErrorTextsAreCut() throws Exception {
        JsonNode audit =
                Json.MAPPER.readTree(
                        AuditRecords.unreadable(
                                        Decision.INVALID_CONTROL,
                                        "y".repeat(50_000),
                                        new byte[0],
                                        "t",
                                        0,
                                        5,
                                        100_000)
                                .json());
        assertEquals(AuditRecords.MAX_ERROR_CHARS + 3, audit.get("error").asText().length());
    }

    static List<String> fieldNames(JsonNode n) {
        List<String> out = new java.util.ArrayList<>();
        n.fieldNames().forEachRemaining(out::add);
        return out;
    }

    static final class HexOf {
        static String bytes(byte[] b) {
            return java.util.HexFormat.of().formatHex(b);
        }
    }
}
