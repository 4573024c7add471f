package io.freqcap.job.tools.simulate;

import static io.freqcap.schema.Instants.DAY;
import static io.freqcap.schema.Instants.HOUR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.capping.history.HistoryGrowth;
import io.freqcap.operators.capping.rule.CappingRule;
import io.freqcap.operators.capping.rule.Judging;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.segment.SegmentBitmap;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SimulateTest {
    static final long DAY_0 = 1_763_769_600_000L; // 2025-11-22T00:00Z

    static final String TWO_A_DAY =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"1d\",\"max\":2}]}],\"exempt\":[\"transactional\"]}";
    static final String ONE_A_DAY_WITH_SHADOW =
            "{\"version\":2,\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"1d\",\"max\":1}]}],\"exempt\":[\"transactional\"],"
                    + "\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"calendar\":\"day\",\"max\":0}]}]}}";

    @TempDir Path tmp;

    static SimulateAccess.Result simulate(String... args) {
        return SimulateAccess.capture(args);
    }

    static String message(String id, long user, long t, String extra) {
        return String.format(
                "{\"messageId\":\"%s\",\"userId\":%d,\"channel\":\"push\",\"timestamp\":%d%s}",
                id, user, t, extra);
    }

    /**
     * Simulates {@code input} under {@code limits} into {@code output}, with {@code extra} options;
     * it must succeed.
     */
    SimulateAccess.Result simulateInto(Path input, String limits, Path output, String... extra)
            throws Exception {
        return SimulateAccess.captureOk(input, file("limits.json", limits), output, extra);
    }

    Path file(String name, String text) throws Exception {
        return Files.writeString(tmp.resolve(name), text);
    }

    static List<JsonNode> lines(Path file) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            out.add(Json.MAPPER.readTree(line));
        }
        return out;
    }

    @Test
    void writesOneLinePerInputLineAsTheJobWouldDecide() throws Exception {
        Path input =
                file(
                        "in.jsonl",
                        String.join(
                                        "\n",
                                        message("a", 1, DAY_0 + HOUR, ""),
                                        message("b", 1, DAY_0 + 2 * HOUR, ""),
                                        message("c", 1, DAY_0 + 3 * HOUR, ""),
                                        message(
                                                "t",
                                                1,
                                                DAY_0 + 4 * HOUR,
                                                ",\"category\":\"transactional\""),
                                        "{\"messageId\":\"x\",\"userId\":\"1\"}",
                                        message("a", 1, DAY_0 + 5 * HOUR, ""),
                                        "",
                                        message("old", 1, DAY_0 - 2 * DAY, ""),
                                        message(
                                                "d",
                                                2,
                                                DAY_0 + HOUR,
                                                ",\"payload\":{\"title\":\"\\u00e9\"}"))
                                + "\n");
        Path output = tmp.resolve("out.jsonl");
        SimulateAccess.Result r = simulateInto(input, TWO_A_DAY, output);
        List<String> raw = Files.readAllLines(output);
        assertEquals(9, raw.size(), "one line per input line, the empty one included");
        assertEquals(
                "{\"decision\":\"ALLOWED\",\"messageId\":\"a\",\"userId\":1,\"segment\":\"*\","
                        + "\"configVersion\":1}",
                raw.get(0));
        List<JsonNode> lines = lines(output);
        assertEquals("ALLOWED", lines.get(1).get("decision").asText());
        JsonNode rejected = lines.get(2);
        assertEquals("REJECTED", rejected.get("decision").asText());
        assertEquals(2, rejected.get("violations").get(0).get("count").asInt());
        assertEquals(DAY_0 + HOUR + DAY, rejected.get("retryAfter").asLong());
        assertEquals("c", rejected.get("message").get("messageId").asText());
        assertEquals("EXEMPT", lines.get(3).get("decision").asText());
        assertFalse(lines.get(3).has("shadow"));
        JsonNode malformed = lines.get(4);
        assertEquals("MALFORMED", malformed.get("decision").asText());
        assertTrue(malformed.get("error").asText().startsWith("userId"), malformed.toString());
        assertEquals("in.jsonl", malformed.get("source").get("topic").asText());
        assertEquals(4, malformed.get("source").get("offset").asLong());
        assertEquals("DUPLICATE", lines.get(5).get("decision").asText());
        assertEquals("MALFORMED", lines.get(6).get("decision").asText());
        assertEquals("STALE", lines.get(7).get("decision").asText());
        assertEquals("ALLOWED", lines.get(8).get("decision").asText());
        assertTrue(r.out().contains("ALLOWED 3 (33.3%)"), r.out());
        assertTrue(r.out().contains("capped (at least one REJECTED): 1 (50.0%)"), r.out());
    }

    @Test
    void allowedLinesSayWhatTheShadowRulesWouldHaveDecided() throws Exception {
        Path input =
                file(
                        "in.jsonl",
                        message("a", 1, DAY_0 + HOUR, "")
                                + "\n"
                                + message(
                                        "t", 1, DAY_0 + 2 * HOUR, ",\"category\":\"transactional\"")
                                + "\n"
                                + message("b", 1, DAY_0 + 3 * HOUR, "")
                                + "\n");
        Path output = tmp.resolve("out.jsonl");
        SimulateAccess.Result r = simulateInto(input, ONE_A_DAY_WITH_SHADOW, output);
        List<JsonNode> lines = lines(output);
        assertEquals("REJECTED", lines.get(0).get("shadow").asText());
        assertFalse(lines.get(1).has("shadow"), "EXEMPT carries no shadow decision");
        assertEquals("REJECTED", lines.get(2).get("decision").asText());
        assertEquals("REJECTED", lines.get(2).get("shadow").get("decision").asText());
        assertTrue(r.out().contains("shadow rules would have rejected: 2"), r.out());
    }

    @Test
    void comparesTwoConfigsOnTheSameInput() throws Exception {
        StringBuilder in = new StringBuilder();
        Random rnd = new Random(3);
        for (int i = 0; i < 2_000; i++) {
            in.append(message("m" + i, rnd.nextInt(50), DAY_0 + i * 10 * 60_000L, "")).append('\n');
        }
        Path input = file("in.jsonl", in.toString());
        Path a = tmp.resolve("a.jsonl");
        Path b = tmp.resolve("b.jsonl");
        Path summary = tmp.resolve("summary.json");
        SimulateAccess.Result r =
                SimulateAccess.captureOk(
                        input,
                        file("a.json", TWO_A_DAY),
                        a,
                        "--compare",
                        file("b.json", ONE_A_DAY_WITH_SHADOW).toString(),
                        "--compare-output",
                        b.toString(),
                        "--summary",
                        summary.toString());
        List<JsonNode> la = lines(a);
        List<JsonNode> lb = lines(b);
        assertEquals(2_000, la.size());
        assertEquals(2_000, lb.size());
        long changed = 0;
        long allowedToRejected = 0;
        for (int i = 0; i < la.size(); i++) {
            String da = la.get(i).get("decision").asText();
            String db = lb.get(i).get("decision").asText();
            changed += da.equals(db) ? 0 : 1;
            allowedToRejected += da.equals("ALLOWED") && db.equals("REJECTED") ? 1 : 0;
        }
        assertTrue(allowedToRejected > 100, allowedToRejected + " fewer deliveries");
        assertTrue(
                r.out()
                        .contains(
                                String.format(
                                        "records decided differently: %,d of 2,000", changed)),
                r.out());
        assertTrue(
                r.out().contains(String.format("ALLOWED   -> REJECTED  %,d", allowedToRejected)),
                r.out());
        JsonNode json = Json.MAPPER.readTree(summary.toFile());
        assertEquals(changed, json.get("changes").get("changed").asLong());
        assertEquals(1, json.get("limits").get("configVersion").asLong());
        assertEquals(2, json.get("compare").get("configVersion").asLong());
        long allowedA =
                la.stream().filter(n -> n.get("decision").asText().equals("ALLOWED")).count();
        assertEquals(allowedA, json.get("limits").get("decisions").get("ALLOWED").asLong());
        // no user-day holds more than the config allows in its window's day
        assertFalse(json.get("compare").get("deliveriesPerUserDay").has("3"));
    }

    @Test
    void aHeavyUsersLongHistoryDecidesAsAShortOne() throws Exception {
        String config =
                "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                        + "[{\"window\":\"1h\",\"max\":150},{\"window\":\"1d\",\"max\":700}]}]}";
        LimitConfig cfg = LimitConfig.parse(config);
        StringBuilder in = new StringBuilder();
        List<OutboundMessage> messages = new ArrayList<>();
        Random rnd = new Random(8);
        for (int i = 0; i < 5_000; i++) {
            // bursts and quiet spells: the history grows long, shrinks short, grows again
            long t = DAY_0 + i * 20_000L + (i / 1000) * 2 * DAY - rnd.nextInt(600_000);
            String id = rnd.nextInt(40) == 0 && i > 0 ? "m" + rnd.nextInt(i) : "m" + i;
            in.append(message(id, 7, t, "")).append('\n');
            messages.add(new OutboundMessage(id, 7, "push", "marketing", t));
        }
        Path output = tmp.resolve("out.jsonl");
        simulateInto(file("in.jsonl", in.toString()), config, output);
        List<JsonNode> lines = lines(output);
        CountedHistory h = UserHistory.EMPTY;
        int[] seen = new int[Decision.values().length];
        for (int i = 0; i < messages.size(); i++) {
            Verdict v = CappingRule.judge(h, messages.get(i), Judging.of(cfg, "*"));
            if (v.decision() == Decision.ALLOWED) {
                h =
                        HistoryGrowth.grown(
                                h, messages.get(i), messages.get(i).timestamp(), false, cfg);
            }
            assertEquals(v.decision().name(), lines.get(i).get("decision").asText(), "line " + i);
            seen[v.decision().ordinal()]++;
        }
        assertTrue(seen[Decision.REJECTED.ordinal()] > 100, "rejections " + seen[2]);
        assertTrue(seen[Decision.DUPLICATE.ordinal()] > 10, "duplicates " + seen[3]);
    }

    @Test
    void usersInASegmentGetItsRule() throws Exception {
        String config =
                "{\"version\":1,\"rules\":[{\"segment\":\"vip\",\"limits\":"
                        + "[{\"window\":\"1d\",\"max\":3}]},{\"segment\":\"*\",\"limits\":"
                        + "[{\"window\":\"1d\",\"max\":1}]}]}";
        String bitmap =
                Base64.getEncoder()
                        .encodeToString(SegmentBitmap.of(2).write(SegmentBitmap.Format.ROARING32));
        Path segments =
                file(
                        "segments.json",
                        "[{\"segmentId\":\"vip\",\"version\":1,\"priority\":5,"
                                + "\"format\":\"roaring32\",\"bitmap\":\""
                                + bitmap
                                + "\"}]");
        StringBuilder in = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            in.append(message("a" + i, 1, DAY_0 + i * HOUR, "")).append('\n');
            in.append(message("b" + i, 2, DAY_0 + i * HOUR, "")).append('\n');
        }
        Path output = tmp.resolve("out.jsonl");
        SimulateAccess.Result r =
                simulateInto(
                        file("in.jsonl", in.toString()),
                        config,
                        output,
                        "--segments",
                        segments.toString());
        List<JsonNode> lines = lines(output);
        assertEquals("*", lines.get(0).get("segment").asText());
        assertEquals("vip", lines.get(1).get("segment").asText());
        assertEquals("REJECTED", lines.get(4).get("decision").asText()); // user 1's third
        assertEquals("ALLOWED", lines.get(5).get("decision").asText()); // user 2's third
        assertTrue(r.out().contains("vip"), r.out());
    }

    @Test
    void aLineOverOneGibibyteIsMalformedWithItsLengthAndTheRestIsDecided() throws Exception {
        // A line of 1.1 GiB (a sparse run of zero bytes) between two good ones: once a
        // NegativeArraySizeException, now MALFORMED as in the job, never held whole.
        Path in = tmp.resolve("huge.jsonl");
        long hugeLength = (1L << 30) + (100L << 20);
        byte[] first = (message("m1", 7, DAY_0, "") + "\n").getBytes(StandardCharsets.UTF_8);
        byte[] last =
                ("\n" + message("m2", 7, DAY_0 + 1, "") + "\n").getBytes(StandardCharsets.UTF_8);
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(in.toFile(), "rw")) {
            f.write(first);
            f.seek(first.length + hugeLength);
            f.write(last);
        }
        Path output = tmp.resolve("out.jsonl");
        simulateInto(in, TWO_A_DAY, output, "--max-record-bytes", "100000");
        List<JsonNode> lines = lines(output);
        assertEquals(3, lines.size());
        assertEquals("ALLOWED", lines.get(0).get("decision").asText());
        JsonNode bad = lines.get(1);
        assertEquals("MALFORMED", bad.get("decision").asText());
        assertEquals(
                "record too large: " + hugeLength + " bytes, over --max-record-bytes 100000",
                bad.get("error").asText());
        assertEquals(hugeLength, bad.get("rawBytes").asLong());
        assertTrue(bad.get("rawTruncated").asBoolean());
        assertTrue(Files.readAllLines(output).get(1).length() <= 100_000);
        assertEquals("ALLOWED", lines.get(2).get("decision").asText());
    }

    @Test
    void maxFutureMakesATimestampFarAheadOfTheClockMalformed() throws Exception {
        long now = System.currentTimeMillis();
        String in =
                message("ok", 7, now + DAY - 60_000, "")
                        + "\n"
                        + message("micros", 8, now * 1000, "")
                        + "\n";
        Path output = tmp.resolve("out.jsonl");
        Path input = file("in.jsonl", in);
        Path limits = file("limits.json", TWO_A_DAY);
        SimulateAccess.captureOk(input, limits, output);
        List<JsonNode> lines = lines(output);
        assertEquals("ALLOWED", lines.get(0).get("decision").asText());
        assertEquals("MALFORMED", lines.get(1).get("decision").asText());
        assertEquals(
                "timestamp " + now * 1000 + " is more than 1d after the job's clock",
                lines.get(1).get("error").asText());
        SimulateAccess.captureOk(input, limits, output, "--max-future", "off");
        // off takes any time before the year 10000; microseconds lie far past it
        assertEquals("MALFORMED", lines(output).get(1).get("decision").asText());
        assertTrue(
                lines(output)
                        .get(1)
                        .get("error")
                        .asText()
                        .startsWith("timestamp: after the year 9999"));
        SimulateAccess.Result r =
                SimulateAccess.capture(input, limits, output, "--max-future", "soon");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--max-future: expected off or a positive integer"), r.err());
    }

    @Test
    void aBadCommandLineSaysWhatIsWrongAndExitsTwo() throws Exception {
        Path limits = file("limits.json", TWO_A_DAY);
        Path out = tmp.resolve("out.jsonl");
        SimulateAccess.Result unknown = simulate("--inptu", "x");
        assertEquals(2, unknown.code());
        assertTrue(unknown.err().contains("unknown option --inptu"), unknown.err());
        SimulateAccess.Result noLimits =
                simulate("--input", limits.toString(), "--output", out.toString());
        assertEquals(2, noLimits.code());
        assertTrue(noLimits.err().contains("--limits is required"), noLimits.err());
        SimulateAccess.Result both =
                simulate(
                        "--input",
                        "x",
                        "--bootstrap-servers",
                        "localhost:1",
                        "--limits",
                        limits.toString(),
                        "--output",
                        out.toString());
        assertEquals(2, both.code());
        assertTrue(both.err().contains("exactly one of --input and --bootstrap-servers"));
        SimulateAccess.Result invalid =
                SimulateAccess.capture(limits, file("bad.json", "{\"version\":0}"), out);
        assertEquals(2, invalid.code());
        assertTrue(invalid.err().contains("--limits: invalid config in"), invalid.err());
        SimulateAccess.Result missing =
                SimulateAccess.capture(tmp.resolve("none.jsonl"), limits, out);
        assertEquals(2, missing.code());
        assertTrue(missing.err().contains("none.jsonl"), missing.err());
    }

    @Test
    void preferencesAreInForceForTheWholeReplayTheHighestVersionWinning() throws Exception {
        String config =
                "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                        + "[{\"window\":\"1d\",\"max\":3}]}]}";
        Path prefs =
                file(
                        "prefs.jsonl",
                        "{\"userId\":1,\"version\":2,\"limits\":[{\"window\":\"1d\",\"max\":1}]}\n"
                                + "{\"userId\":1,\"version\":1,\"optOut\":{\"channels\":[\"push\"]}}\n"
                                + "\n"
                                + "{\"userId\":2,\"version\":1,\"optOut\":{\"channels\":[\"push\"]}}\n");
        StringBuilder in = new StringBuilder();
        for (int i = 0; i < 2; i++) {
            in.append(message("a" + i, 1, DAY_0 + i * HOUR, "")).append('\n');
            in.append(message("b" + i, 2, DAY_0 + i * HOUR, "")).append('\n');
            in.append(message("c" + i, 3, DAY_0 + i * HOUR, "")).append('\n');
        }
        Path output = tmp.resolve("out.jsonl");
        Path input = file("in.jsonl", in.toString());
        Path limits = file("limits.json", config);
        SimulateAccess.captureOk(input, limits, output, "--preferences", prefs.toString());
        List<JsonNode> lines = lines(output);
        assertEquals("ALLOWED", lines.get(0).get("decision").asText(), "version 2: one a day");
        assertEquals("preference:opt-out", lines.get(1).at("/violations/0/scope").asText());
        assertEquals("ALLOWED", lines.get(2).get("decision").asText(), "no preferences");
        assertEquals("preference:all", lines.get(3).at("/violations/0/scope").asText());
        assertEquals("ALLOWED", lines.get(5).get("decision").asText());

        Path bad = file("bad.jsonl", "{\"userId\":1,\"version\":1}\n{\"userId\":2}\n");
        SimulateAccess.Result invalid =
                SimulateAccess.capture(input, limits, output, "--preferences", bad.toString());
        assertEquals(2, invalid.code());
        assertTrue(invalid.err().contains("line 2: version"), invalid.err());
    }

    @Test
    void aPauseForGoodAndTheLastMillisecondUnderQuietHoursAreDecidedNotFatal() throws Exception {
        // Long.MAX_VALUE is 07:12 UTC: inside HOLD_TILL_MORNING's quiet hours.
        Path prefs =
                file(
                        "prefs.jsonl",
                        "{\"userId\":1,\"version\":1,\"pausedUntil\":9223372036854775807}\n"
                                + "{\"userId\":2,\"version\":1,\"pausedUntil\":253402300800000}\n");
        String in =
                message("a", 1, DAY_0 + 2 * HOUR, "")
                        + "\n"
                        + message("b", 2, DAY_0 + 2 * HOUR, "")
                        + "\n"
                        + message("c", 3, Long.MAX_VALUE, "")
                        + "\n"
                        + message("d", 4, DAY_0 + 10 * HOUR, "")
                        + "\n";
        Path output = tmp.resolve("out.jsonl");
        simulateInto(
                file("in.jsonl", in),
                HOLD_TILL_MORNING,
                output,
                "--preferences",
                prefs.toString(),
                "--max-future",
                "off");
        List<JsonNode> lines = lines(output);
        assertEquals(4, lines.size(), lines.toString());
        for (int i = 0; i < 2; i++) {
            assertEquals("REJECTED", lines.get(i).get("decision").asText(), lines.toString());
            assertTrue(lines.get(i).get("retryAfter").isNull(), "paused for good: " + lines);
        }
        assertEquals("MALFORMED", lines.get(2).get("decision").asText(), lines.toString());
        assertTrue(
                lines.get(2).get("error").asText().startsWith("timestamp: after the year 9999"),
                lines.toString());
        assertEquals("ALLOWED", lines.get(3).get("decision").asText());
    }

    /** Quiet 21:00 to 08:00 UTC, one a day, held up to 12 h. */
    static final String HOLD_TILL_MORNING =
            "{\"version\":3,\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"1d\",\"max\":1}],\"hold\":\"12h\","
                    + "\"quietHours\":{\"from\":\"21:00\",\"to\":\"08:00\"}}],"
                    + "\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"1d\",\"max\":1}],\"hold\":\"1d\"}]}}";

    @Test
    void heldMessagesSayTheirSendTimeAndTheSummaryCountsThem() throws Exception {
        Path input =
                file(
                        "in.jsonl",
                        message("night", 1, DAY_0 + 22 * HOUR, "")
                                + "\n"
                                + message("noon", 2, DAY_0 + 12 * HOUR, "")
                                + "\n"
                                + message("again", 2, DAY_0 + 13 * HOUR, "")
                                + "\n");
        Path output = tmp.resolve("out.jsonl");
        SimulateAccess.Result r =
                simulateInto(
                        input,
                        HOLD_TILL_MORNING,
                        output,
                        "--max-future",
                        "off",
                        "--summary",
                        tmp.resolve("summary.json").toString());
        List<JsonNode> lines = lines(output);
        assertEquals("ALLOWED", lines.get(0).get("decision").asText());
        assertEquals(DAY_0 + 32 * HOUR, lines.get(0).get("sendAt").asLong(), "08:00 next day");
        assertFalse(lines.get(1).has("sendAt"), "not held");
        // 13:00 is not quiet, but one a day: held for the window, past 12 h, so REJECTED; the
        // shadow rule, which holds a day, would have held it.
        assertEquals("REJECTED", lines.get(2).get("decision").asText());
        assertEquals(DAY_0 + 36 * HOUR, lines.get(2).get("retryAfter").asLong());
        assertEquals("HELD", lines.get(2).get("shadow").get("decision").asText());
        assertEquals(DAY_0 + 36 * HOUR, lines.get(2).get("shadow").get("sendAt").asLong());
        assertTrue(r.out().contains("held for a later send time: 1"), r.out());
        assertTrue(r.out().contains("delay p50 10h"), r.out());
        JsonNode summary = Json.MAPPER.readTree(tmp.resolve("summary.json").toFile());
        assertEquals(1, summary.get("limits").get("held").asInt());
        assertEquals(10 * HOUR, summary.get("limits").get("heldDelayMillis").get("max").asLong());
    }

    /**
     * Contract v4 §3, §6, §8 in simulate: {@code maxHeld} against the replay's clock (the latest
     * timestamp decided), and STALE from stamped timestamps, never a send time ahead.
     */
    @Test
    void maxHeldAndStaleReadTheReplaysClockAndStampedTimestamps() throws Exception {
        String config =
                "{\"version\":1,\"maxHeld\":2,\"rules\":[{\"segment\":\"*\",\"limits\":"
                        + "[{\"window\":\"1h\",\"max\":1},{\"window\":\"1d\",\"max\":100}],"
                        + "\"hold\":\"1d\"}]}";
        StringBuilder in = new StringBuilder();
        // One an hour: 00:00 at once, 00:01 held to 01:00, 00:02 to 02:00, 00:03 beyond maxHeld.
        for (int i = 0; i < 4; i++) {
            in.append(message("a" + i, 1, DAY_0 + i * 60_000L, "")).append('\n');
        }
        // 01:30: the one held to 01:00 was sent by then (the replay's clock): one waits.
        in.append(message("b", 1, DAY_0 + 90 * 60_000L, "")).append('\n');
        // Stamped before the latest stamped (01:30) minus a day: STALE; stamped after it, not,
        // though before the latest send time (03:00) minus a day.
        in.append(message("late", 1, DAY_0 + 90 * 60_000L - DAY - 1, "")).append('\n');
        in.append(message("recent", 1, DAY_0 + 3 * HOUR - DAY - 60_000L, "")).append('\n');
        Path output = tmp.resolve("out.jsonl");
        simulateInto(file("in.jsonl", in.toString()), config, output, "--max-future", "off");
        List<JsonNode> lines = lines(output);
        assertFalse(lines.get(0).has("sendAt"));
        assertEquals(DAY_0 + HOUR, lines.get(1).get("sendAt").asLong());
        assertEquals(DAY_0 + 2 * HOUR, lines.get(2).get("sendAt").asLong());
        JsonNode rejected = lines.get(3);
        assertEquals("REJECTED", rejected.get("decision").asText());
        JsonNode hold = rejected.get("violations").get(rejected.get("violations").size() - 1);
        assertEquals("hold", hold.get("scope").asText());
        assertEquals(2, hold.get("count").asInt());
        assertEquals(DAY_0 + HOUR, rejected.get("retryAfter").asLong());
        assertEquals(DAY_0 + 3 * HOUR, lines.get(4).get("sendAt").asLong(), "held: one waits");
        assertEquals("STALE", lines.get(5).get("decision").asText());
        assertEquals("ALLOWED", lines.get(6).get("decision").asText(), lines.get(6).toString());
    }

    /**
     * Contract v4 §6, §8: simulate preempts as the job does, its clock the latest timestamp
     * decided. The held promotion's line is its final outcome, PREEMPTED, in its input position,
     * written once known; the summary counts preemptions by priority and campaign; against the same
     * config without {@code preempt}, the changes pair each record's final outcomes.
     */
    @Test
    void aHeldMessagesLineIsItsFinalOutcomeWhenALaterMessageTakesItsPlace() throws Exception {
        String config =
                "{\"version\":11,\"timezone\":\"Europe/Berlin\",\"rules\":[{\"segment\":\"*\","
                        + "\"limits\":[{\"calendar\":\"day\",\"max\":1}],\"hold\":\"12h\","
                        + "\"quietHours\":{\"from\":\"21:00\",\"to\":\"08:00\"},\"preempt\":true}]}";
        long nov22 = java.time.Instant.parse("2025-11-22T09:00:00Z").toEpochMilli();
        long at2210 = java.time.Instant.parse("2025-11-22T21:10:00Z").toEpochMilli();
        long at2330 = java.time.Instant.parse("2025-11-22T22:30:00Z").toEpochMilli();
        long nov23at8 = java.time.Instant.parse("2025-11-23T07:00:00Z").toEpochMilli();
        String berlin = ",\"timezone\":\"Europe/Berlin\"";
        String in =
                message("m-000390", 42, nov22, berlin)
                        + "\n"
                        + message(
                                "m-000400",
                                42,
                                at2210,
                                berlin + ",\"priority\":10,\"campaignId\":\"weekend-promo\"")
                        + "\n"
                        // another user's message between them waits behind the held line
                        + message("x-1", 7, at2210 + 60_000L, "")
                        + "\n"
                        + message("m-000412", 42, at2330, berlin + ",\"priority\":80")
                        + "\n";
        Path a = tmp.resolve("a.jsonl");
        Path b = tmp.resolve("b.jsonl");
        Path summary = tmp.resolve("summary.json");
        SimulateAccess.Result r =
                SimulateAccess.captureOk(
                        file("in.jsonl", in),
                        file("a.json", config),
                        a,
                        "--compare",
                        file("b.json", config.replace(",\"preempt\":true", "")).toString(),
                        "--compare-output",
                        b.toString(),
                        "--summary",
                        summary.toString(),
                        "--max-future",
                        "off");
        List<JsonNode> la = lines(a);
        assertEquals(
                List.of("m-000390", "m-000400", "x-1", "m-000412"),
                la.stream().map(n -> n.get("messageId").asText()).toList());
        JsonNode preempted = la.get(1);
        assertEquals("PREEMPTED", preempted.get("decision").asText(), preempted.toString());
        assertEquals(nov23at8, preempted.get("sendAt").asLong());
        assertEquals("m-000412", preempted.get("preemptedBy").asText());
        assertEquals(
                "preempted by m-000412 (priority 80 over 10)", preempted.get("reason").asText());
        assertEquals("ALLOWED", la.get(3).get("decision").asText());
        assertEquals(nov23at8, la.get(3).get("sendAt").asLong());
        List<JsonNode> lb = lines(b);
        assertEquals("ALLOWED", lb.get(1).get("decision").asText());
        assertEquals("REJECTED", lb.get(3).get("decision").asText());
        JsonNode json = Json.MAPPER.readTree(summary.toFile());
        JsonNode limits = json.get("limits");
        assertEquals(1, limits.get("decisions").get("PREEMPTED").asLong());
        assertEquals(1, limits.get("preemptedByPriority").get("10").asLong());
        assertEquals(1, limits.get("byCampaign").get("weekend-promo").get("PREEMPTED").asLong());
        assertEquals(
                2, limits.get("held").asLong(), "x-1 and the alert; the promotion was not sent");
        assertEquals(2, json.get("changes").get("changed").asLong());
        assertTrue(
                r.out().contains("by their priority: {10=1}; by campaign: {weekend-promo=1}"),
                r.out());
    }
}
