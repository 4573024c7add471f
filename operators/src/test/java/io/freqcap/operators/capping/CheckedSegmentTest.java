package io.freqcap.operators.capping;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.operators.segments.FlinkFileLoader;
import io.freqcap.operators.segments.SegmentCheck;
import io.freqcap.operators.segments.SegmentUnavailableException;
import io.freqcap.schema.ControlRecord;
import io.freqcap.schema.Delivery;
import io.freqcap.schema.InboundMessage;
import io.freqcap.schema.RawRecord;
import io.freqcap.schema.SegmentBitmap;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No capping task decides on other segments than the rest: a segment file checked good before the
 * broadcast that one task cannot read at first is retried until it can (then it decides as the
 * others do), and a task that still cannot fails, for Flink to restart it from the checkpoint.
 */
class CheckedSegmentTest {
    static final long DAY_1_NOON = 1_763_812_800_000L;
    static final long VIP = 7;

    @TempDir Path tmp;
    private final CappingHarnesses harnesses = new CappingHarnesses();

    @AfterEach
    void close() throws Exception {
        FlakyFileSystemFactory.FAIL_NEXT.set(0);
        harnesses.close();
    }

    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> instance(
            int subtask) throws Exception {
        return harnesses.open(
                new CappingFunction(CappingSettings.of(ControlRecordFuzzTest.CONFIG)),
                null,
                2,
                subtask);
    }

    /** The vip segment as a uri load on flaky://, checked as the job's segment-check does. */
    ControlRecord checkedVipLoad(long version) throws Exception {
        Path file =
                Files.write(
                        tmp.resolve("vip-" + version),
                        SegmentBitmap.of(VIP).write(SegmentBitmap.Format.ROARING32));
        String json =
                ControlRecordFuzzTest.load(
                        "vip", version, "flaky://" + file.toAbsolutePath(), "roaring32");
        ControlRecord checked =
                SegmentCheck.check(
                        new ControlRecord(
                                ControlRecord.Kind.SEGMENT,
                                json.getBytes(StandardCharsets.UTF_8),
                                "segment-updates",
                                0,
                                version),
                        FlinkFileLoader.INSTANCE);
        assertTrue(checked.checkedCrc32() != null, checked.toString());
        return checked;
    }

    String segmentOfVip(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> h)
            throws Exception {
        String json =
                "{\"messageId\":\"m-"
                        + System.nanoTime()
                        + "\",\"userId\":"
                        + VIP
                        + ",\"channel\":\"push\",\"timestamp\":"
                        + DAY_1_NOON
                        + "}";
        h.processElement(
                InboundMessage.of(
                        new RawRecord(null, json.getBytes(StandardCharsets.UTF_8), "in", 0, 1)),
                DAY_1_NOON);
        var out = h.extractOutputValues();
        return out.get(out.size() - 1).segment();
    }

    @Test
    void aTaskThatCannotReadTheFileAtFirstRetriesAndDecidesAsTheOthers() throws Exception {
        var first = instance(1);
        var second = instance(0);
        ControlRecord load = checkedVipLoad(1);
        int opensBefore = FlakyFileSystemFactory.OPENS.get();
        FlakyFileSystemFactory.FAIL_NEXT.set(1); // this task's first read fails
        first.processBroadcastElement(load, DAY_1_NOON);
        second.processBroadcastElement(load, DAY_1_NOON);
        assertEquals(2, FlakyFileSystemFactory.OPENS.get() - opensBefore, "one failure, one retry");
        assertEquals(0, ControlRecordFuzzTest.audits(second).size(), "no INVALID_CONTROL");
        int owner = KeyGroupRangeAssignment.assignKeyToParallelOperator(VIP, 128, 2);
        var vipsTask = owner == 1 ? first : second;
        assertEquals("vip", segmentOfVip(vipsTask));
    }

    @Test
    void aTaskThatStillCannotReadItFailsRatherThanDecideOnOtherSegments() throws Exception {
        var h = instance(0);
        ControlRecord load = checkedVipLoad(2);
        FlakyFileSystemFactory.FAIL_NEXT.set(1_000);
        Exception e = assertThrows(Exception.class, () -> h.processBroadcastElement(load, 0));
        Throwable cause = e;
        while (cause != null && !(cause instanceof SegmentUnavailableException)) {
            cause = cause.getCause();
        }
        assertTrue(cause != null, "fails the task with the reason: " + e);
        assertTrue(cause.getMessage().contains("after 4 attempts"), cause.getMessage());
    }
}
