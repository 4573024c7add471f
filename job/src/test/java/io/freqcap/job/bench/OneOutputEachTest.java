package io.freqcap.job.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The end-to-end benchmark's check fails a run that loses, repeats or invents a decision. */
class OneOutputEachTest {
    private static byte[] json(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] delivery(int i) {
        return json("{\"messageId\":\"m-" + i + "\",\"userId\":7,\"timestamp\":1}");
    }

    @Test
    void aRunWithOneOutputEachOrWaitingPasses() {
        OneOutputEach check = new OneOutputEach();
        check.output(delivery(0));
        check.output(json("{\"decision\": \"REJECTED\", \"messageId\": \"m-1\", \"userId\": 7}"));
        check.output(json("{\"decision\":\"INVALID_CONTROL\",\"error\":\"bad\"}"));
        assertNull(check.problems(3, List.of(json("{\"messageId\": \"m-2\", \"sendAt\": 5}"))));
        assertEquals(2, check.outputs());
    }

    @Test
    void lostRepeatedBothAndUnknownAreEachCounted() {
        OneOutputEach check = new OneOutputEach();
        check.output(delivery(0));
        check.output(delivery(0)); // repeated
        check.output(delivery(1));
        check.output(delivery(9)); // never sent
        String problems = check.problems(4, List.of(delivery(1))); // m-1 both; m-2, m-3 lost
        assertTrue(
                problems.startsWith("2 messages without an output, 1 outputs repeated,"), problems);
        assertTrue(
                problems.contains("1 both decided and waiting, 1 outputs of messages never"),
                problems);
    }

    @Test
    void onlyAMessageIdOfTheBenchmarksFormCounts() {
        assertEquals(42, OneOutputEach.messageIndex(delivery(42)));
        assertEquals(-1, OneOutputEach.messageIndex(json("{\"messageId\":\"x-1\"}")));
        assertEquals(-1, OneOutputEach.messageIndex(json("{\"messageId\":\"m-\"}")));
        assertEquals(-1, OneOutputEach.messageIndex(json("{\"messageId\":\"m-12")));
        assertEquals(-1, OneOutputEach.messageIndex(json("{\"messageId\":\"m-99999999999\"}")));
    }
}
