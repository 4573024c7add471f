package io.freqcap.operators.capping;

import static io.freqcap.schema.Instants.DAY_1_NOON;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.operators.segments.FlinkFileLoader;
import io.freqcap.operators.segments.SegmentCheck;
import io.freqcap.operators.segments.SegmentUnavailableException;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import io.freqcap.schema.segment.SegmentBitmap;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * No capping task decides on other segments than the rest: a segment file checked good before the
 * broadcast that one task cannot read at first is retried until it can (then it decides as the
 * others do), and a task that still cannot fails, for Flink to restart it from the checkpoint.
 */
class CheckedSegmentTest {
    static final long VIP = 7;

    @TempDir Path tmp;
    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    @AfterEach
    void resetFailures() {
        FlakyFileSystemFactory.FAIL_NEXT.set(0);
    }

    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> instance(
            int subtask) throws Exception {
        return harnesses.open(CappingSettings.of(ControlRecordFuzzTest.CONFIG), null, 2, subtask);
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

    private long day = 0;

    /** The segment a message of the vip user is decided under (days apart: always allowed). */
    String segmentOfVip(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> h)
            throws Exception {
        long t = DAY_1_NOON + 8 * 86_400_000L * day++;
        String json =
                "{\"messageId\":\"m-"
                        + day
                        + "\",\"userId\":"
                        + VIP
                        + ",\"channel\":\"push\",\"timestamp\":"
                        + t
                        + "}";
        h.processElement(
                InboundMessage.of(
                        new RawRecord(null, json.getBytes(StandardCharsets.UTF_8), "in", 0, day)),
                t);
        var out = h.extractOutputValues();
        return out.get(out.size() - 1).segment();
    }

    /** Sends messages until the vip user is decided as vip; fails after 10 s. */
    void awaitVip(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> h)
            throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!segmentOfVip(h).equals("vip")) {
            assertTrue(System.nanoTime() < deadline, "the segment was never applied");
            Thread.sleep(50);
        }
    }

    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> vipsTask(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> zero,
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> one) {
        return KeyGroupRangeAssignment.assignKeyToParallelOperator(VIP, 128, 2) == 1 ? one : zero;
    }

    @Test
    void aTaskThatCannotReadTheFileAtFirstDecidesOnWhatItHeldThenAsTheOthers() throws Exception {
        var one = instance(1);
        var zero = instance(0);
        ControlRecord load = checkedVipLoad(1);
        FlakyFileSystemFactory.FAIL_NEXT.set(1); // the first read fails: a retry 0.25 s later
        one.processBroadcastElement(load, DAY_1_NOON); // returns at once: loads off the thread
        zero.processBroadcastElement(load, DAY_1_NOON);
        var vips = vipsTask(zero, one);
        assertEquals("*", segmentOfVip(vips), "decided on the segments held meanwhile");
        awaitVip(vips);
        assertEquals(0, CappingHarnesses.audits(zero).size(), "no INVALID_CONTROL");
    }

    @Test
    void aLoadUnderWayWhenACheckpointIsTakenIsResumedAfterARestore() throws Exception {
        var h = instance(KeyGroupRangeAssignment.assignKeyToParallelOperator(VIP, 128, 2));
        ControlRecord load = checkedVipLoad(3);
        FlakyFileSystemFactory.FAIL_NEXT.set(2); // 1.25 s of retries
        h.processBroadcastElement(load, DAY_1_NOON);
        var snapshot = h.snapshot(1, DAY_1_NOON);
        harnesses.close(h);
        FlakyFileSystemFactory.FAIL_NEXT.set(0);
        var restored =
                harnesses.open(
                        CappingSettings.of(ControlRecordFuzzTest.CONFIG),
                        snapshot,
                        2,
                        KeyGroupRangeAssignment.assignKeyToParallelOperator(VIP, 128, 2));
        awaitVip(restored);
    }

    @Test
    void aTaskThatStillCannotReadItFailsRatherThanDecideOnOtherSegments() throws Exception {
        int subtask = KeyGroupRangeAssignment.assignKeyToParallelOperator(VIP, 128, 2);
        var h = instance(subtask);
        ControlRecord load = checkedVipLoad(2);
        FlakyFileSystemFactory.FAIL_NEXT.set(1_000);
        h.processBroadcastElement(load, DAY_1_NOON);
        long deadline = System.nanoTime() + 20_000_000_000L;
        Exception e = null;
        while (e == null && System.nanoTime() < deadline) {
            try {
                assertEquals("*", segmentOfVip(h));
                Thread.sleep(200);
            } catch (Exception thrown) {
                e = thrown;
            }
        }
        Throwable cause = e;
        while (cause != null && !(cause instanceof SegmentUnavailableException)) {
            cause = cause.getCause();
        }
        assertTrue(cause != null, "fails the task with the reason: " + e);
        assertTrue(cause.getMessage().contains("after 4 attempts"), cause.getMessage());
    }
}
