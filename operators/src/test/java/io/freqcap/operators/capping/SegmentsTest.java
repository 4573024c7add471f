package io.freqcap.operators.capping;

import static io.freqcap.operators.capping.CappingHarnesses.audits;
import static io.freqcap.schema.Configs.rule;
import static io.freqcap.schema.Configs.version;
import static io.freqcap.schema.Configs.window;
import static io.freqcap.schema.Instants.DAY_1_NOON;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.segments.FlinkFileLoader;
import io.freqcap.operators.segments.SegmentCache;
import io.freqcap.operators.segments.SegmentTable;
import io.freqcap.schema.Records;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.segment.SegmentBitmap;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** A user's limits follow its segment (contract.md §4), through updates, deletes and restores. */
class SegmentsTest {

    /** "new": one a day; "active": two a day; "*": three a day. */
    static final String CONFIG =
            version(1)
                    .rule(rule("new", window("1d", 1)))
                    .rule(rule("active", window("1d", 2)))
                    .rule(rule("*", window("1d", 3)))
                    .json();

    @TempDir Path tmp;
    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> harness(
            String initialSegments, OperatorSubtaskState restore) throws Exception {
        return harnesses.open(
                CappingSettings.of(CONFIG).withSegments(initialSegments), restore, 1, 0);
    }

    static String inline(String id, long version, int priority, long... users) {
        return Records.segmentLoad(id, version, priority, users);
    }

    static ControlRecord segment(String json) {
        return Records.segment(json);
    }

    /** Sends n messages to the user within a day; returns the segment header and decisions. */
    List<String> send(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> h,
            long user,
            int n)
            throws Exception {
        int before = h.extractOutputValues().size();
        var side = h.getSideOutput(CappingFunction.AUDIT);
        int auditsBefore = side == null ? 0 : side.size();
        long t = DAY_1_NOON + harnesses.offset() * 60_000;
        for (int i = 0; i < n; i++) {
            long k = harnesses.nextOffset();
            h.processElement(Records.message("m" + k, user, t + i).inbound(k), t);
        }
        List<String> out = new ArrayList<>();
        h.extractOutputValues()
                .subList(before, h.extractOutputValues().size())
                .forEach(d -> out.add(d.decision() + "/" + d.segment()));
        side = h.getSideOutput(CappingFunction.AUDIT);
        if (side != null) {
            int i = 0;
            for (StreamRecord<AuditEvent> r : side) {
                if (i++ >= auditsBefore) {
                    JsonNode a = Json.MAPPER.readTree(r.getValue().json());
                    out.add(a.get("decision").asText() + "/" + a.path("segment").asText());
                }
            }
        }
        return out;
    }

    @Test
    void limitsFollowTheUsersSegment() throws Exception {
        var h = harness("[" + inline("new", 1, 30, 42) + "]", null);
        assertEquals(List.of("ALLOWED/new", "REJECTED/new"), send(h, 42, 2));
        assertEquals(List.of("ALLOWED/*", "ALLOWED/*", "ALLOWED/*", "REJECTED/*"), send(h, 43, 4));
    }

    @Test
    void highestPriorityWinsAndTiesGoToTheSmallerId() throws Exception {
        var h = harness(null, null);
        h.processBroadcastElement(segment(inline("active", 1, 20, 42, 43)), 0);
        h.processBroadcastElement(segment(inline("new", 1, 30, 42)), 0);
        assertEquals("ALLOWED/new", send(h, 42, 1).get(0));
        assertEquals("ALLOWED/active", send(h, 43, 1).get(0));
        // Same priority: "active" < "new".
        h.processBroadcastElement(segment(inline("new", 2, 20, 42)), 0);
        assertEquals("ALLOWED/active", send(h, 42, 1).get(0));
    }

    @Test
    void aSegmentWithoutARuleIsPassedOver() throws Exception {
        var h =
                harness(
                        "[" + inline("vip", 1, 99, 42) + "," + inline("active", 1, 10, 42) + "]",
                        null);
        assertEquals("ALLOWED/active", send(h, 42, 1).get(0));
    }

    @Test
    void addRemoveAndDeleteMoveUsersMidStream() throws Exception {
        var h = harness("[" + inline("new", 1, 30, 42) + "]", null);
        assertEquals("ALLOWED/*", send(h, 7, 1).get(0));
        h.processBroadcastElement(
                segment("{\"segmentId\":\"new\",\"version\":2,\"op\":\"add\",\"userIds\":[7]}"), 0);
        assertEquals(
                List.of("REJECTED/new"), send(h, 7, 1), "7 is new now: one a day, already used");
        h.processBroadcastElement(
                segment("{\"segmentId\":\"new\",\"version\":3,\"op\":\"remove\",\"userIds\":[42]}"),
                0);
        assertEquals("ALLOWED/*", send(h, 42, 1).get(0));
        h.processBroadcastElement(
                segment("{\"segmentId\":\"new\",\"version\":4,\"op\":\"delete\"}"), 0);
        assertEquals("ALLOWED/*", send(h, 7, 1).get(0));
        assertTrue(
                audits(h).stream()
                        .noneMatch(a -> a.get("decision").asText().equals("INVALID_CONTROL")));
    }

    @Test
    void staleUnknownAndCorruptUpdatesAreAuditedAndChangeNothing() throws Exception {
        var h = harness("[" + inline("new", 5, 30, 42) + "]", null);
        h.processBroadcastElement(segment(inline("new", 5, 30, 43)), 0);
        h.processBroadcastElement(
                segment(
                        "{\"segmentId\":\"churned\",\"version\":9,\"op\":\"add\",\"userIds\":[42]}"),
                0);
        h.processBroadcastElement(
                segment(
                        "{\"segmentId\":\"new\",\"version\":6,\"priority\":30,\"format\":\"roaring32\",\"bitmap\":\"AAECAwQFBgc=\"}"),
                0);
        h.processBroadcastElement(
                segment(
                        "{\"segmentId\":\"new\",\"version\":7,\"format\":\"roaring32\",\"uri\":\"file:///no/such/file.roaring\"}"),
                0);
        h.processBroadcastElement(
                segment(
                        "{\"segmentId\":\"new\",\"version\":8,\"format\":\"bloom\",\"bitmap\":\"AA==\"}"),
                0);
        h.processBroadcastElement(segment("not json"), 0);

        List<JsonNode> a = audits(h);
        assertEquals(6, a.size());
        assertTrue(a.get(0).get("error").asText().startsWith("stale version"), a.get(0).toString());
        assertEquals("unknown segment \"churned\"", a.get(1).get("error").asText());
        assertTrue(
                a.get(2).get("error").asText().contains("not a portable Roaring bitmap")
                        || a.get(2).get("error").asText().contains("truncated"),
                a.get(2).toString());
        assertTrue(a.get(3).get("error").asText().contains("unreadable"), a.get(3).toString());
        assertTrue(a.get(4).get("error").asText().startsWith("format:"), a.get(4).toString());
        assertEquals("segment-updates", a.get(5).get("source").get("topic").asText());
        // The segment keeps its content: 42 is still new, 43 is not.
        assertEquals("ALLOWED/new", send(h, 42, 1).get(0));
        assertEquals("ALLOWED/*", send(h, 43, 1).get(0));
    }

    @Test
    void restoreRereadsTheUriAndKeepsDeltas() throws Exception {
        Path file = tmp.resolve("active-v1.roaring");
        Files.write(file, SegmentBitmap.of(42, 43).write(SegmentBitmap.Format.ROARING32));
        var before = harness(null, null);
        before.processBroadcastElement(
                segment(
                        "{\"segmentId\":\"active\",\"version\":1,\"priority\":20,\"format\":\"roaring32\",\"uri\":\""
                                + file.toUri()
                                + "\"}"),
                0);
        before.processBroadcastElement(
                segment("{\"segmentId\":\"active\",\"version\":2,\"op\":\"add\",\"userIds\":[44]}"),
                0);
        before.processBroadcastElement(
                segment(
                        "{\"segmentId\":\"active\",\"version\":3,\"op\":\"remove\",\"userIds\":[43]}"),
                0);
        OperatorSubtaskState snapshot = before.snapshot(1, 1);
        harnesses.close(before);
        assertEquals(0, SegmentCache.size(), "the closed task gave its bitmap back");

        var after = harness(null, snapshot);
        assertEquals(1, SegmentCache.size(), "the restore read the uri again");
        assertEquals("ALLOWED/active", send(after, 42, 1).get(0));
        assertEquals("ALLOWED/*", send(after, 43, 1).get(0));
        assertEquals("ALLOWED/active", send(after, 44, 1).get(0));
        // Versions survive too: version 3 again is stale.
        after.processBroadcastElement(
                segment("{\"segmentId\":\"active\",\"version\":3,\"op\":\"add\",\"userIds\":[45]}"),
                0);
        assertTrue(audits(after).get(0).get("error").asText().startsWith("stale version"));
    }

    @Test
    void tasksInOneJvmShareOneCopyOfAUriBitmap() throws Exception {
        Path file = tmp.resolve("shared.roaring");
        Files.write(file, SegmentBitmap.of(42).write(SegmentBitmap.Format.ROARING32));
        int[] reads = {0};
        io.freqcap.operators.segments.SegmentLoader counting =
                new io.freqcap.operators.segments.SegmentLoader() {
                    @Override
                    public java.io.InputStream open(String uri) throws java.io.IOException {
                        reads[0]++;
                        return FlinkFileLoader.INSTANCE.open(uri);
                    }

                    @Override
                    public long maxBytes() {
                        return FlinkFileLoader.INSTANCE.maxBytes();
                    }
                };
        String load =
                "{\"segmentId\":\"new\",\"version\":1,\"priority\":1,\"format\":\"roaring32\",\"uri\":\""
                        + file.toUri()
                        + "\"}";
        io.freqcap.schema.segment.SegmentUpdate u =
                io.freqcap.schema.segment.SegmentUpdate.parse(
                        load.getBytes(StandardCharsets.UTF_8));
        SegmentTable slot1 = new SegmentTable();
        SegmentTable slot2 = new SegmentTable();
        assertEquals(null, slot1.apply(u, counting));
        assertEquals(null, slot2.apply(u, counting));
        assertEquals(1, reads[0], "read once for both tasks");
        assertEquals(1, SegmentCache.size());
        slot1.close();
        assertEquals(1, SegmentCache.size(), "still held by the other task");
        slot2.apply(
                io.freqcap.schema.segment.SegmentUpdate.parse(
                        "{\"segmentId\":\"new\",\"version\":2,\"op\":\"delete\"}"
                                .getBytes(StandardCharsets.UTF_8)),
                counting);
        assertEquals(0, SegmentCache.size(), "released with the last holder");
    }

    @Test
    void checkpointDoesNotGrowWithTheSizeOfAUriLoadedBitmap() throws Exception {
        long small = checkpointedBytesWithSegmentOf(10);
        long large = checkpointedBytesWithSegmentOf(10_000_000);
        assertTrue(
                large < small + 64,
                "10 members: " + small + " bytes, 10 million: " + large + " bytes");
    }

    private long checkpointedBytesWithSegmentOf(int members) throws Exception {
        Path file = tmp.resolve("big-" + members + ".roaring");
        // Every third id: a bitmap of several megabytes for ten million members.
        Files.write(
                file,
                SegmentBitmap.of(LongStream.range(0, members).map(i -> i * 3).toArray())
                        .write(SegmentBitmap.Format.ROARING32));
        var h = harness(null, null);
        h.processBroadcastElement(
                segment(
                        "{\"segmentId\":\"active\",\"version\":1,\"priority\":20,\"format\":\"roaring32\",\"uri\":\""
                                + file.toUri()
                                + "\"}"),
                0);
        assertEquals("ALLOWED/active", send(h, 3, 1).get(0));
        OperatorSubtaskState s = h.snapshot(1, 1);
        return s.getManagedOperatorState().stream().mapToLong(x -> x.getStateSize()).sum();
    }
}
