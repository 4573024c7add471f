package io.freqcap.job.tools.simulate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.SharedFiles;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.receipt.DeliveryReceipt;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code freqcap-simulate --receipts} (contract.md §8): receipts replayed among the messages, a
 * receipt stamped T just before the first message stamped later than T, in file order among those
 * due together; engagements reset {@code fatigue} and failed deliveries un-count as in the job; a
 * receipt without a timestamp or an unreadable one stops simulate naming its line; {@code
 * --compare} counts the messages each config decided under a lowered cap.
 */
class SimulateReceiptsTest {
    /** Four a day halved from the first message on, never below zero. */
    static final String HALVING =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\","
                    + "\"max\":4}],\"fatigue\":{\"after\":1,\"scale\":0.5,\"floor\":0,"
                    + "\"window\":\"30d\"}}]}";

    static final String FOUR_A_DAY =
            "{\"version\":2,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\","
                    + "\"max\":4}]}]}";

    static final long HOUR = 3_600_000L;

    @TempDir Path tmp;

    Path file(String name, String text) throws Exception {
        return Files.writeString(tmp.resolve(name), text);
    }

    static String push(String id, long t) {
        return String.format(
                "{\"messageId\":\"%s\",\"userId\":42,\"channel\":\"push\",\"timestamp\":%d}%n",
                id, t);
    }

    static String opened(long at) {
        return String.format(
                "{\"messageId\":\"m-0\",\"userId\":42,\"status\":\"opened\",\"timestamp\":%d}%n",
                at);
    }

    static long berlin(int day, int hour) {
        return LocalDateTime.of(2025, 11, day, hour, 0)
                .atZone(ZoneId.of("Europe/Berlin"))
                .toInstant()
                .toEpochMilli();
    }

    List<String> decisions(Path output) throws Exception {
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(output)) {
            JsonNode n = Json.MAPPER.readTree(line);
            out.add(n.get("messageId").asText() + " " + n.get("decision").asText());
        }
        return out;
    }

    /**
     * The contract's §6 example, as {@code FatigueTest} runs it in the operator: caps lowered step
     * by step to one a day at u = 12, the open of {@code examples/receipt-opened.json} restoring
     * them; {@code --compare} against the config without fatigue counts the nine messages decided
     * under a lowered cap.
     */
    @Test
    void theContractsExamplesReplayAsTheJobDecidesThem() throws Exception {
        String config =
                new String(
                        SharedFiles.read("contract/examples/limit-config-fatigue.json"),
                        StandardCharsets.UTF_8);
        String receipt =
                new String(
                                SharedFiles.read("contract/examples/receipt-opened.json"),
                                StandardCharsets.UTF_8)
                        .trim();
        StringBuilder in = new StringBuilder();
        for (int hour = 10; hour < 14; hour++) {
            in.append(push("a" + hour, berlin(1, hour)));
        }
        for (String[] m :
                new String[][] {
                    {"b10", "2", "10"}, {"b11", "2", "11"}, {"b12", "2", "12"},
                    {"c10", "10", "10"}, {"c11", "10", "11"}, {"d10", "11", "10"},
                    {"d11", "11", "11"}, {"e10", "19", "10"}, {"f10", "20", "10"},
                    {"f11", "20", "11"}
                }) {
            in.append(push(m[0], berlin(Integer.parseInt(m[1]), Integer.parseInt(m[2]))));
        }
        for (int hour = 10; hour < 15; hour++) {
            in.append(push("g" + hour, berlin(25, hour)));
        }
        Path output = tmp.resolve("out.jsonl");
        Path summary = tmp.resolve("summary.json");
        SimulateAccess.Result r =
                SimulateAccess.captureOk(
                        file("in.jsonl", in.toString()),
                        file("fatigue.json", config),
                        output,
                        "--receipts",
                        file("receipts.jsonl", receipt + "\n").toString(),
                        "--compare",
                        file("plain.json", withoutFatigue(config)).toString(),
                        "--summary",
                        summary.toString());
        List<JsonNode> lines = SimulateTest.lines(output);
        List<String> rejected = new ArrayList<>();
        for (JsonNode n : lines) {
            if (n.get("decision").asText().equals("REJECTED")) {
                rejected.add(n.get("messageId").asText());
            }
        }
        assertEquals(List.of("b12", "f11", "g14"), rejected);
        JsonNode f11 = lines.get(13);
        assertEquals("f11", f11.get("messageId").asText());
        assertEquals(
                Json.MAPPER.readTree(
                        "[{\"scope\":\"all\",\"calendar\":\"day\",\"max\":1,\"count\":1,"
                                + "\"fatigue\":{\"unengaged\":12,\"configured\":4}}]"),
                f11.get("violations"));
        assertEquals(
                Json.MAPPER.readTree(
                        "[{\"scope\":\"all\",\"calendar\":\"day\",\"max\":4,\"count\":4}]"),
                lines.get(18).get("violations"),
                "after the open: the configured cap");
        JsonNode s = Json.MAPPER.readTree(summary.toFile());
        assertEquals(9, s.at("/limits/fatigued").asLong());
        assertEquals(0, s.at("/compare/fatigued").asLong());
        assertTrue(r.out().contains("decided under a lowered cap (fatigue): 9 -> 0"), r.out());
    }

    /** The same config with no rule's fatigue. */
    private static String withoutFatigue(String config) throws Exception {
        var root = (com.fasterxml.jackson.databind.node.ObjectNode) Json.MAPPER.readTree(config);
        root.put("version", root.get("version").asLong() + 1);
        for (JsonNode rule : root.get("rules")) {
            ((com.fasterxml.jackson.databind.node.ObjectNode) rule).remove("fatigue");
        }
        return root.toString();
    }

    @Test
    void aReceiptStampedLikeAMessageIsAppliedAfterIt() throws Exception {
        long t0 = berlin(22, 10);
        long t = t0 + 2 * HOUR;
        String in =
                push("m1", t0)
                        + push("m2", t0 + HOUR) // u = 1: two a day
                        + push("m3", t) // stamped as the open: before it, u = 2, one a day
                        + push("m4", t + 1); // after it: u = 0, four a day
        Path output = tmp.resolve("out.jsonl");
        SimulateAccess.captureOk(
                file("in.jsonl", in),
                file("halving.json", HALVING),
                output,
                "--receipts",
                file("receipts.jsonl", opened(t)).toString());
        assertEquals(
                List.of("m1 ALLOWED", "m2 ALLOWED", "m3 REJECTED", "m4 ALLOWED"),
                decisions(output));
        // A failed receipt frees its message's place: m2 is no longer counted for m5.
        String failed =
                "{\"messageId\":\"m2\",\"userId\":42,\"status\":\"failed\",\"timestamp\":"
                        + (t + 2)
                        + "}\n";
        SimulateAccess.captureOk(
                file("in2.jsonl", in + push("m5", t + 3)),
                file("four.json", FOUR_A_DAY),
                output,
                "--receipts",
                file("failed.jsonl", failed).toString());
        assertEquals(
                List.of("m1 ALLOWED", "m2 ALLOWED", "m3 ALLOWED", "m4 ALLOWED", "m5 ALLOWED"),
                decisions(output),
                "four a day, m2 un-counted");
    }

    /**
     * A failed receipt stamped after a held message's send time un-counts it, as a live job that
     * reads it then has sent the message: the replay's clock (the latest message's timestamp) is
     * still before that send time when the receipt is applied.
     */
    @Test
    void aFailedReceiptAfterAHeldMessagesSendTimeUnCountsIt() throws Exception {
        String oneAnHour =
                "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1h\","
                        + "\"max\":1}],\"hold\":\"1h\"}]}";
        long t0 = berlin(22, 10);
        long minute = 60_000L;
        String in =
                push("m1", t0) // sent at once
                        + push("m2", t0 + 10 * minute) // held to t0 + 1h
                        + push("m3", t0 + 70 * minute);
        String failed =
                "{\"messageId\":\"m2\",\"userId\":42,\"status\":\"failed\",\"timestamp\":"
                        + (t0 + 65 * minute)
                        + "}\n";
        Path output = tmp.resolve("out.jsonl");
        SimulateAccess.captureOk(
                file("in.jsonl", in),
                file("hour.json", oneAnHour),
                output,
                "--receipts",
                file("failed.jsonl", failed).toString());
        List<String> lines = Files.readAllLines(output);
        assertEquals(t0 + HOUR, Json.MAPPER.readTree(lines.get(1)).get("sendAt").asLong());
        JsonNode m3 = Json.MAPPER.readTree(lines.get(2));
        assertEquals("ALLOWED", m3.get("decision").asText(), lines.toString());
        assertTrue(m3.path("sendAt").isMissingNode(), "m2 no longer counts: sent at once");
    }

    @Test
    void receiptsDueAtOneMessageAreAppliedInFileOrder() throws Exception {
        Path f =
                file(
                        "receipts.jsonl",
                        opened(300).replace("m-0", "r1")
                                + "\n"
                                + opened(100).replace("m-0", "r2")
                                + opened(500).replace("m-0", "r3")
                                + opened(200).replace("m-0", "r4"));
        ReceiptReplay replay = ReceiptReplay.read(f);
        List<String> applied = new ArrayList<>();
        replay.before(100, r -> applied.add(r.messageId()));
        assertEquals(List.of(), applied, "none stamped before 100");
        replay.before(301, r -> applied.add(r.messageId()));
        assertEquals(List.of("r1", "r2", "r4"), applied, "file order, not timestamp order");
        replay.before(301, (DeliveryReceipt r) -> applied.add(r.messageId()));
        replay.before(501, r -> applied.add(r.messageId()));
        assertEquals(List.of("r1", "r2", "r4", "r3"), applied, "each once");
    }

    @Test
    void aReceiptWithoutATimestampOrUnreadableStopsSimulateNamingItsLine() throws Exception {
        Path input = file("in.jsonl", push("m1", berlin(22, 10)));
        Path limits = file("halving.json", HALVING);
        Path output = tmp.resolve("out.jsonl");
        Path noTime =
                file(
                        "no-time.jsonl",
                        opened(1) + "{\"messageId\":\"m1\",\"userId\":42,\"status\":\"opened\"}\n");
        SimulateAccess.Result r =
                SimulateAccess.capture(input, limits, output, "--receipts", noTime.toString());
        assertEquals(2, r.code());
        assertTrue(r.err().contains("line 2: timestamp"), r.err());
        Path bad =
                file("bad.jsonl", "\n{\"messageId\":\"m1\",\"userId\":-1,\"status\":\"opened\"}\n");
        SimulateAccess.Result b =
                SimulateAccess.capture(input, limits, output, "--receipts", bad.toString());
        assertEquals(2, b.code());
        assertTrue(b.err().contains("line 2: userId"), b.err());
    }
}
