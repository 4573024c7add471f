package io.freqcap.operators.segments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.Records;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.segment.SegmentBitmap;
import io.freqcap.schema.segment.SegmentUpdate;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Validate once, apply everywhere: a segment file is checked before the broadcast; every task then
 * refuses a bad one alike without reading it, and loads a good one or, after retries, fails.
 */
class SegmentCheckTest {
    static final long VIP = 42;

    @TempDir Path tmp;

    final SegmentTable table = new SegmentTable();
    final List<Long> slept = new java.util.ArrayList<>();

    @AfterEach
    void close() {
        table.close();
    }

    static ControlRecord segmentRecord(String json) {
        return Records.segment(json);
    }

    static String uriLoad(String uri, long version) {
        return "{\"segmentId\":\"vip\",\"version\":"
                + version
                + ",\"priority\":10,\"format\":\"roaring32\",\"uri\":\""
                + uri
                + "\"}";
    }

    Path vipFile() throws IOException {
        return Files.write(
                tmp.resolve("vip.bin"),
                SegmentBitmap.of(VIP).write(SegmentBitmap.Format.ROARING32));
    }

    /** A loader over fixed bytes that fails its first {@code failures} opens. */
    static SegmentLoader flaky(byte[] bytes, int failures, AtomicInteger opens) {
        return SegmentFixtures.loader(
                1 << 20,
                () -> {
                    if (opens.incrementAndGet() <= failures) {
                        throw new IOException("connection reset");
                    }
                    return new ByteArrayInputStream(bytes);
                });
    }

    @Test
    void aGoodFileLeavesWithItsChecksumAndOtherRecordsPassUnchanged() throws Exception {
        Path file = vipFile();
        ControlRecord rec = segmentRecord(uriLoad(file.toUri().toString(), 1));
        ControlRecord checked = SegmentCheck.check(rec, FlinkFileLoader.INSTANCE);
        assertEquals(CheckedLoad.crc32(Files.readAllBytes(file)), checked.checkedCrc32());
        assertNull(checked.checkError());
        ControlRecord config = SegmentFixtures.config(1);
        assertSame(config, SegmentCheck.check(config, FlinkFileLoader.INSTANCE));
        ControlRecord notJson = segmentRecord("{not json");
        assertSame(notJson, SegmentCheck.check(notJson, FlinkFileLoader.INSTANCE));
    }

    @Test
    void aBadFileIsRefusedByEveryTaskWithTheChecksReasonUnread() throws Exception {
        ControlRecord missing =
                SegmentCheck.check(
                        segmentRecord(uriLoad(tmp.resolve("none.bin").toUri().toString(), 1)),
                        FlinkFileLoader.INSTANCE);
        assertNull(missing.checkedCrc32());
        assertTrue(
                missing.checkError().contains("is unreadable: no such file"), missing.checkError());
        Path corrupt = Files.writeString(tmp.resolve("corrupt.bin"), "not a bitmap");
        ControlRecord bad =
                SegmentCheck.check(
                        segmentRecord(uriLoad(corrupt.toUri().toString(), 1)),
                        FlinkFileLoader.INSTANCE);
        assertTrue(bad.checkError().startsWith("segment \"vip\": "), bad.checkError());
        SegmentLoader mustNotRead =
                SegmentFixtures.loader(
                        1,
                        () -> {
                            throw new AssertionError("a task read a file the check found bad");
                        });
        SegmentUpdate u = SegmentUpdate.parse(bad.value());
        assertEquals(bad.checkError(), table.apply(u, mustNotRead, null, bad.checkError()));
        assertEquals(0, table.size());
    }

    @Test
    void aTaskThatCannotReadAGoodFileAtFirstRetriesAndAppliesIt() throws Exception {
        byte[] bytes = Files.readAllBytes(vipFile());
        AtomicInteger opens = new AtomicInteger();
        table.sleeper(slept::add);
        SegmentUpdate u = SegmentUpdate.parse(uriLoad("s3://segments/vip-1", 1).getBytes());
        assertNull(table.apply(u, flaky(bytes, 2, opens), CheckedLoad.crc32(bytes), null));
        assertEquals(3, opens.get());
        assertEquals(List.of(250L, 1_000L), slept, "backed off before each retry");
        assertEquals("vip", table.resolve(VIP, SegmentTableTest.config(1, "vip")));
    }

    @Test
    void aTaskThatStillCannotFailsInsteadOfDecidingOnOtherSegments() throws Exception {
        byte[] bytes = Files.readAllBytes(vipFile());
        table.sleeper(slept::add);
        SegmentUpdate u = SegmentUpdate.parse(uriLoad("s3://segments/vip-1", 1).getBytes());
        AtomicInteger opens = new AtomicInteger();
        SegmentUnavailableException e =
                assertThrows(
                        SegmentUnavailableException.class,
                        () ->
                                table.apply(
                                        u,
                                        flaky(bytes, 100, opens),
                                        CheckedLoad.crc32(bytes),
                                        null));
        assertEquals(4, opens.get());
        assertTrue(
                e.getMessage().contains("checked good but this task cannot load"), e.getMessage());
        // A file changed since the check (another CRC-32) is no better.
        SegmentUnavailableException changed =
                assertThrows(
                        SegmentUnavailableException.class,
                        () ->
                                table.apply(
                                        u,
                                        flaky(bytes, 0, new AtomicInteger()),
                                        CheckedLoad.crc32(bytes) + 1,
                                        null));
        assertTrue(changed.getMessage().contains("CRC-32"), changed.getMessage());
        assertEquals(0, table.size());
        assertEquals(0, SegmentCache.size(), "nothing left held by failed loads");
        assertEquals(
                LimitConfig.DEFAULT_SEGMENT, table.resolve(VIP, SegmentTableTest.config(1, "vip")));
    }
}
