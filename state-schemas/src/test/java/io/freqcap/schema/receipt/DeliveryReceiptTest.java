package io.freqcap.schema.receipt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.SharedFiles;
import io.freqcap.schema.common.MalformedRecordException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A delivery receipt read as contract.md §11 says. */
class DeliveryReceiptTest {
    static DeliveryReceipt parse(String s) throws MalformedRecordException {
        return DeliveryReceipt.parse(s.getBytes(StandardCharsets.UTF_8));
    }

    static String error(String s) {
        return assertThrows(MalformedRecordException.class, () -> parse(s)).getMessage();
    }

    @Test
    void readsTheContractsExample() throws Exception {
        DeliveryReceipt r =
                parse(
                        "{\"messageId\": \"m-000017\", \"userId\": 42, \"status\": \"failed\","
                                + " \"timestamp\": 1763798460000}");
        assertEquals(new DeliveryReceipt("m-000017", 42, "failed", 1_763_798_460_000L), r);
        assertTrue(r.failed());
        assertEquals(
                r,
                DeliveryReceipt.parse(SharedFiles.read("contract/examples/delivery-receipt.json")));
    }

    @Test
    void anyOtherStatusIsReadAndFailsNothing() throws Exception {
        DeliveryReceipt r = parse("{\"messageId\": \"m\", \"userId\": 1, \"status\": \"opened\"}");
        assertFalse(r.failed());
        assertNull(r.timestamp());
    }

    @Test
    void unreadableReceiptsSayWhatIsWrong() {
        assertTrue(
                error("{\"userId\": 1, \"status\": \"failed\"}").startsWith("messageId: required"));
        assertTrue(
                error("{\"messageId\": \"m\", \"status\": \"failed\"}")
                        .startsWith("userId: required"));
        assertTrue(error("{\"messageId\": \"m\", \"userId\": 1}").startsWith("status: required"));
        assertTrue(
                error("{\"messageId\": 5, \"userId\": 1, \"status\": \"failed\"}")
                        .startsWith("messageId: expected a string"));
        assertTrue(
                error("{\"messageId\": \"m\", \"userId\": -1, \"status\": \"failed\"}")
                        .startsWith("userId: out of range"));
        assertTrue(
                error("{\"messageId\": \"m\", \"userId\": 1, \"status\": \"\"}")
                        .startsWith("status: must be 1..64"));
        assertTrue(
                error(
                                "{\"messageId\": \"m\", \"userId\": 1, \"status\": \"failed\", \"timestamp\": \"x\"}")
                        .startsWith("timestamp:"));
        assertTrue(
                error(
                                "{\"messageId\": \""
                                        + "m".repeat(129)
                                        + "\", \"userId\": 1, \"status\": \"failed\"}")
                        .startsWith("messageId: must be 1..128"));
        assertTrue(error("not json").startsWith("not valid JSON"));
    }
}
