package io.freqcap.operators.capping;

import static io.freqcap.operators.capping.CappingHarnesses.audits;
import static io.freqcap.schema.Instants.DAY_1_NOON;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.Records;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.segment.SegmentBitmap;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * No control record fails the capping task: random and mutated configs, commands and segment
 * updates each give at most one INVALID_CONTROL, never an exception, and messages keep being
 * decided. Hostile segment files (endless, huge, not a bitmap, outside the allowed uris) are
 * INVALID_CONTROL at once, with error texts that carry none of their bytes.
 */
class ControlRecordFuzzTest {
    static final String CONFIG =
            "{\"version\":1,\"rules\":[{\"segment\":\"vip\",\"limits\":[{\"window\":\"1d\","
                    + "\"max\":5}],\"channels\":{\"email\":[{\"window\":\"1h\",\"max\":1}]}},"
                    + "{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":2},"
                    + "{\"window\":\"7d\",\"max\":4}]}],\"exempt\":[\"transactional\"]}";

    /** Valid records the mutations start from. */
    static final List<String> CONFIGS =
            List.of(
                    CONFIG.replace("\"version\":1", "\"version\":2"),
                    "{\"command\":\"rebuild-mirror\"}",
                    "{\"version\":3,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"90d\","
                            + "\"max\":1000000}]}]}");

    static final List<String> SEGMENT_UPDATES =
            List.of(
                    "{\"segmentId\":\"vip\",\"version\":4,\"priority\":30,\"format\":\"roaring32\","
                            + "\"bitmap\":\"OjAAAAIAAAAAAAIAAQAAABgAAAAeAAAAKgDpA+oDyCw=\"}",
                    "{\"segmentId\":\"vip\",\"version\":13,\"op\":\"add\",\"userIds\":[1001,"
                            + " 1002]}",
                    "{\"segmentId\":\"vip\",\"version\":14,\"op\":\"remove\",\"userIds\":[1003]}",
                    "{\"segmentId\":\"vip\",\"version\":15,\"op\":\"delete\"}");

    @TempDir Path tmp;
    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> harness(
            Bounds bounds) throws Exception {
        return harnesses.open(
                CappingSettings.of(CONFIG).withMirror(true).withHistoryCache(64).withBounds(bounds),
                null,
                1,
                0);
    }

    ControlRecord control(ControlRecord.Kind kind, byte[] value) {
        return new ControlRecord(
                kind,
                value,
                kind == ControlRecord.Kind.CONFIG ? "limit-config" : "segment-updates",
                0,
                harnesses.nextOffset());
    }

    void message(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> h,
            long user,
            long t)
            throws Exception {
        long n = harnesses.nextOffset();
        h.processElement(Records.message("m" + n, user, t).inbound(n), t);
    }

    /** One random change: a flipped, deleted or inserted byte, a cut, or a field's value. */
    static byte[] mutate(String valid, Random random) {
        byte[] b = valid.getBytes(StandardCharsets.UTF_8);
        switch (random.nextInt(6)) {
            case 0:
                b[random.nextInt(b.length)] ^= (byte) (1 << random.nextInt(8));
                return b;
            case 1:
                return java.util.Arrays.copyOf(b, random.nextInt(b.length));
            case 2:
                {
                    int at = random.nextInt(b.length);
                    byte[] out = new byte[b.length + 1];
                    System.arraycopy(b, 0, out, 0, at);
                    out[at] = (byte) "{}[]\",:0-e.\\ x\u0000".charAt(random.nextInt(15));
                    System.arraycopy(b, at, out, at + 1, b.length - at);
                    return out;
                }
            case 3:
                {
                    String[] values = {
                        "null",
                        "-1",
                        "0",
                        "1e400",
                        "9223372036854775808",
                        "\"\"",
                        "[]",
                        "{}",
                        "true",
                        "\"90d\"",
                        "[[[[[]]]]]",
                        "1.5",
                        "\"*\"",
                        "\"roaring64\""
                    };
                    // replace one JSON value after a colon
                    String s = valid;
                    int colon = s.indexOf(':', random.nextInt(s.length()));
                    if (colon < 0) {
                        return b;
                    }
                    int end = colon + 1;
                    while (end < s.length() && ",}]".indexOf(s.charAt(end)) < 0) {
                        end++;
                    }
                    return (s.substring(0, colon + 1)
                                    + values[random.nextInt(values.length)]
                                    + s.substring(end))
                            .getBytes(StandardCharsets.UTF_8);
                }
            case 4:
                {
                    byte[] noise = new byte[random.nextInt(200)];
                    random.nextBytes(noise);
                    return noise;
                }
            default:
                return random.nextBoolean() ? null : new byte[0];
        }
    }

    @Test
    void randomAndMutatedControlRecordsNeverFailTheTask() throws Exception {
        var h = harness(Bounds.DEFAULTS);
        Random random = new Random(11);
        int sent = 0;
        for (int i = 0; i < 3_000; i++) {
            boolean config = random.nextBoolean();
            List<String> valid = config ? CONFIGS : SEGMENT_UPDATES;
            byte[] value = mutate(valid.get(random.nextInt(valid.size())), random);
            h.processBroadcastElement(
                    control(config ? ControlRecord.Kind.CONFIG : ControlRecord.Kind.SEGMENT, value),
                    DAY_1_NOON);
            sent++;
            message(h, random.nextInt(50), DAY_1_NOON + i * 1000L);
        }
        List<JsonNode> audits = audits(h);
        long invalid =
                audits.stream()
                        .filter(a -> a.get("decision").asText().equals("INVALID_CONTROL"))
                        .count();
        assertTrue(invalid > 1_000 && invalid <= sent, invalid + " of " + sent);
        for (JsonNode a : audits) {
            if (a.get("decision").asText().equals("INVALID_CONTROL")) {
                assertTrue(!a.get("error").asText().isEmpty(), a.toString());
                assertTrue(a.has("source"), a.toString());
            }
        }
        long decided = h.extractOutputValues().size() + audits.size() - invalid;
        assertEquals(3_000, decided, "every message decided");
    }

    /** The INVALID_CONTROL error of one segment update, or null when it was applied. */
    String segmentError(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> h,
            String json)
            throws Exception {
        int before = audits(h).size();
        h.processBroadcastElement(
                control(ControlRecord.Kind.SEGMENT, json.getBytes(StandardCharsets.UTF_8)),
                DAY_1_NOON);
        List<JsonNode> after = audits(h);
        return after.size() == before ? null : after.get(before).get("error").asText();
    }

    static String load(String id, long version, String uri, String format) {
        return "{\"segmentId\":\""
                + id
                + "\",\"version\":"
                + version
                + ",\"priority\":10,\"format\":\""
                + format
                + "\",\"uri\":\""
                + uri
                + "\"}";
    }

    @Test
    void hostileSegmentFilesAreRefusedAndThePreviousSegmentStays() throws Exception {
        Path segments = Files.createDirectories(tmp.resolve("segments"));
        Path good = segments.resolve("vip.roaring");
        Files.write(good, SegmentBitmap.of(7).write(SegmentBitmap.Format.ROARING32));
        Path huge = segments.resolve("huge.roaring");
        try (RandomAccessFile f = new RandomAccessFile(huge.toFile(), "rw")) {
            f.setLength(2_000_000_000L); // sparse: nothing written
        }
        Path fifo = segments.resolve("fifo");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertEquals(0, mkfifo.waitFor());
        Path text = segments.resolve("passwd");
        Files.writeString(text, "root:x:0:0:root:/root:/bin/bash\n");
        Path outside = Files.write(tmp.resolve("outside.roaring"), Files.readAllBytes(good));

        var h = harness(new Bounds(100_000, 1_000_000, List.of(segments.toUri().toString())));
        assertEquals(null, segmentError(h, load("vip", 1, good.toUri().toString(), "roaring32")));

        long start = System.nanoTime();
        String zero = segmentError(h, load("vip", 2, "file:///dev/zero", "roaring32"));
        assertTrue(zero.contains("not under the allowed --segment-uris"), zero);
        var open = harness(new Bounds(100_000, 1_000_000, List.of()));
        String devZero = segmentError(open, load("vip", 2, "file:///dev/zero", "roaring64"));
        assertTrue(devZero.contains("not a regular file"), devZero);
        String fromFifo = segmentError(h, load("vip", 3, fifo.toUri().toString(), "roaring32"));
        assertTrue(fromFifo.contains("not a regular file"), fromFifo);
        String tooBig = segmentError(h, load("vip", 4, huge.toUri().toString(), "roaring32"));
        assertTrue(tooBig.contains("2000000000 bytes, over --max-segment-bytes 1000000"), tooBig);
        String notBitmap = segmentError(h, load("vip", 5, text.toUri().toString(), "roaring32"));
        assertTrue(notBitmap.contains("not a portable Roaring bitmap"), notBitmap);
        assertTrue(!notBitmap.matches(".*\\d{5,}.*"), "no bytes of the file: " + notBitmap);
        String escaping =
                segmentError(
                        h, load("vip", 6, segments.toUri() + "../outside.roaring", "roaring32"));
        assertTrue(escaping.contains("not under the allowed"), escaping);
        String elsewhere = segmentError(h, load("vip", 7, outside.toUri().toString(), "roaring32"));
        assertTrue(elsewhere.contains("not under the allowed"), elsewhere);
        assertTrue(System.nanoTime() - start < 10_000_000_000L, "all refused within seconds");

        // user 7 is still in vip (5 a day), others get the default 2 a day
        for (int i = 0; i < 5; i++) {
            message(h, 7, DAY_1_NOON + i);
        }
        assertEquals(5, h.extractOutputValues().size(), "vip still holds user 7");
        for (Delivery d : h.extractOutputValues()) {
            assertEquals("vip", d.segment());
        }
    }

    @Test
    void inlineBitmapsAreValidatedToo() throws Exception {
        var h = harness(Bounds.DEFAULTS);
        byte[] zeros = new byte[10_000];
        String error =
                segmentError(
                        h,
                        "{\"segmentId\":\"vip\",\"version\":1,\"format\":\"roaring64\",\"bitmap\":\""
                                + Base64.getEncoder().encodeToString(zeros)
                                + "\"}");
        assertTrue(error.contains("bytes after the end of the bitmap"), error);
    }

    @Test
    void aFileSystemThatThrowsGivesOneInvalidControl() throws Exception {
        var h = harness(Bounds.DEFAULTS);
        String error = segmentError(h, load("vip", 1, "faulty:///segments/vip", "roaring32"));
        assertEquals("not applied: NoClassDefFoundError while applying it", error);
        message(h, 7, DAY_1_NOON);
        assertEquals(1, h.extractOutputValues().size(), "messages are still decided");
    }
}
