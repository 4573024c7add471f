package io.freqcap.job.tools.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.common.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HeldQueryTest {
    /** The contract's notice of m-000400 (§12): what held it, in words, and its local send time. */
    @Test
    void aNoticeReadsAsWordsInTheUsersZone() throws Exception {
        var n =
                Json.MAPPER.readTree(
                        "{\"messageId\":\"m-000400\",\"userId\":42,\"sendAt\":1763881200000,"
                                + "\"timezone\":\"Europe/Berlin\",\"heldBy\":[{\"scope\":\"all\","
                                + "\"calendar\":\"day\",\"max\":1,\"count\":1},{\"scope\":"
                                + "\"quiet-hours\",\"from\":\"21:00\",\"to\":\"08:00\"}]}");
        assertEquals("2025-11-23 08:00 +01:00 Europe/Berlin", HeldQuery.local(n));
        assertEquals(
                "all max 1 per day (1 counted); quiet hours 21:00-08:00",
                HeldReasons.of(n.get("heldBy")));
        assertEquals(
                "channel:push max 2 in 7d (2 counted)",
                HeldReasons.of(
                        Json.MAPPER.readTree(
                                "[{\"scope\":\"channel:push\",\"window\":\"7d\",\"max\":2,"
                                        + "\"count\":2}]")));
        assertEquals(
                "all max 1 per day (1 counted, lowered from 4 after 12 sends with no open)",
                HeldReasons.of(
                        Json.MAPPER.readTree(
                                "[{\"scope\":\"all\",\"calendar\":\"day\",\"max\":1,"
                                        + "\"count\":1,\"fatigue\":{\"unengaged\":12,"
                                        + "\"configured\":4}}]")));
        assertTrue(HeldReasons.of(Json.MAPPER.readTree("[]")).contains("not recorded"));
    }

    @Test
    void aBadCommandLineExitsWithTwoAndSaysWhy() throws Exception {
        for (String[] args :
                new String[][] {
                    {"--held"},
                    {"--held", "--bootstrap-servers", "h:1", "--user", "forty-two"},
                    {"--held", "--bootstrap-servers", "h:1", "--colour", "red"},
                    {"--held", "--bootstrap-servers"},
                    {"--held", "--bootstrap-servers", "h:1", "--kafka-config", "/no/such/file"}
                }) {
            var err = new ByteArrayOutputStream();
            assertEquals(
                    2,
                    HeldQuery.run(
                            args,
                            new PrintStream(new ByteArrayOutputStream()),
                            new PrintStream(err, true)));
            assertTrue(
                    err.toString(StandardCharsets.UTF_8).contains("usage: freqcap-query --held"));
        }
        assertNull(HeldQuery.parse(new String[] {"--held", "--help"}));
    }

    @Test
    void onlyNoticesTheJobWritesAreWhatWaits() {
        Map<ByteBuffer, byte[]> live = new LinkedHashMap<>();
        live.put(
                key("42/m-1"),
                bytes(
                        "{\"messageId\":\"m-1\",\"userId\":42,\"timestamp\":1,\"sendAt\":5,"
                                + "\"campaignId\":\"c\"}"));
        live.put(key("42/m-foreign"), bytes("{\"messageId\":\"x\"}")); // another writer's
        live.put(key("42/m-text"), bytes("\"waiting\"")); // JSON, not an object
        live.put(
                key("43/m-2"),
                bytes(
                        "{\"messageId\":\"m-2\",\"userId\":42,\"timestamp\":1,"
                                + "\"sendAt\":3}")); // its key names another user
        live.put(
                key("not-a-key"),
                bytes("{\"messageId\":\"m-3\",\"userId\":42," + "\"timestamp\":1,\"sendAt\":3}"));
        live.put(key("42/m-bytes"), new byte[] {(byte) 0xff, 0x00});
        List<JsonNode> waiting = HeldQuery.waiting(live, null);
        assertEquals(1, waiting.size(), waiting.toString());
        assertEquals("m-1", waiting.get(0).get("messageId").asText());
        assertEquals(List.of(), HeldQuery.waiting(live, "another-campaign"));
    }

    @Test
    void aBrokerThatDoesNotAnswerIsOneLineAndExitCodeOne() throws Exception {
        var err = new ByteArrayOutputStream();
        var out = new ByteArrayOutputStream();
        int code;
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0)) {
            // Accepts connections and never answers: a broker that hangs.
            code =
                    HeldQuery.run(
                            new String[] {
                                "--held",
                                "--bootstrap-servers",
                                "127.0.0.1:" + silent.getLocalPort()
                            },
                            new PrintStream(out, true),
                            new PrintStream(err, true));
        }
        String said = err.toString(StandardCharsets.UTF_8);
        assertEquals(1, code, said);
        assertEquals(1, said.strip().lines().count(), said);
        assertTrue(said.contains("no answer from Kafka at 127.0.0.1:"), said);
        assertEquals("", out.toString(StandardCharsets.UTF_8));
    }

    private static ByteBuffer key(String k) {
        return ByteBuffer.wrap(bytes(k));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
