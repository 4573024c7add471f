package io.freqcap.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

class AuditRecordsTest {
    static byte[] example(String name) throws Exception {
        return SharedFiles.read("contract/examples/" + name);
    }

    @Test
    void rejectedRecordEqualsTheContractExample() throws Exception {
        byte[] message = example("outbound-message.json");
        OutboundMessage m = OutboundMessage.parse(message);
        AuditEvent e =
                AuditRecords.decision(
                        Decision.REJECTED,
                        m,
                        "new",
                        7,
                        List.of(new Violation("all", "1d", 2, 2)),
                        1763841600000L,
                        null,
                        message);

        assertEquals(
                Json.MAPPER.readTree(example("audit-rejected.json")),
                Json.MAPPER.readTree(e.json()));
        assertEquals("42", new String(e.key(), StandardCharsets.UTF_8));
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
                        1287);

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
                                        Decision.MALFORMED, "not valid JSON", raw, "t", 0, 5)
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
                                        5)
                                .json());
        assertEquals(true, audit.get("raw").isNull());
    }

    static final class HexOf {
        static String bytes(byte[] b) {
            return java.util.HexFormat.of().formatHex(b);
        }
    }
}
