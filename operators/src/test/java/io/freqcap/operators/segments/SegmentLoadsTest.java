package io.freqcap.operators.segments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.segment.SegmentBitmap;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/** Segment records wait behind a file loading off the task thread, in order, across snapshots. */
class SegmentLoadsTest {
    static final byte[] BITMAP = bitmap();

    static byte[] bitmap() {
        return SegmentBitmap.of(7).write(SegmentBitmap.Format.ROARING32);
    }

    static long crc() {
        CRC32 c = new CRC32();
        c.update(BITMAP);
        return c.getValue();
    }

    static ControlRecord segment(String json, long offset) {
        return new ControlRecord(
                ControlRecord.Kind.SEGMENT,
                json.getBytes(StandardCharsets.UTF_8),
                "segment-updates",
                0,
                offset);
    }

    /** A loader that blocks every read until {@code open} counts down. */
    static SegmentLoader gated(CountDownLatch open) {
        return SegmentFixtures.loader(
                1 << 20,
                () -> {
                    try {
                        open.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        throw new IOException(e);
                    }
                    return new ByteArrayInputStream(BITMAP);
                });
    }

    @Test
    void recordsBehindALoadWaitAndComeOutInOrder() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        SegmentLoads loads = new SegmentLoads(gated(gate), millis -> {});
        ControlRecord load =
                segment(
                                "{\"segmentId\":\"loads-test\",\"version\":1,\"format\":\"roaring32\","
                                        + "\"uri\":\"s3://b/loads-test-"
                                        + System.nanoTime()
                                        + "\"}",
                                1)
                        .checked(crc(), null);
        ControlRecord add =
                segment(
                        "{\"segmentId\":\"loads-test\",\"version\":2,\"op\":\"add\","
                                + "\"userIds\":[8]}",
                        2);
        ControlRecord config = SegmentFixtures.config(3);
        assertTrue(loads.mustWait(load), "its file is not held yet");
        assertFalse(loads.mustWait(add), "nothing waits yet");
        loads.add(load);
        assertTrue(loads.mustWait(add), "behind the load");
        assertFalse(loads.mustWait(config), "configs never wait");
        loads.add(add);
        assertNull(loads.ready(), "still loading");

        // A snapshot now holds both, in order.
        SegmentLoads restored = new SegmentLoads(gated(gate), millis -> {});
        restored.restore(loads.pending());
        assertEquals(loads.pending(), restored.pending());

        gate.countDown();
        long deadline = System.nanoTime() + 10_000_000_000L;
        ControlRecord first;
        while ((first = loads.ready()) == null) {
            assertTrue(System.nanoTime() < deadline);
            Thread.sleep(10);
        }
        assertEquals(load, first);
        loads.applied();
        assertSame(add, loads.ready(), "no file to load: ready at once");
        loads.applied();
        assertNull(loads.ready());
        assertTrue(loads.isEmpty());
        restored.close();
    }
}
