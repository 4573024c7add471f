package io.freqcap.operators.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.InboundMessage;
import io.freqcap.schema.RawRecord;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.junit.jupiter.api.Test;

class MessageTimeTest {
    static final long DAY_1_NOON = 1_763_812_800_000L;

    static InboundMessage at(long t) {
        String json =
                "{\"messageId\":\"m\",\"userId\":1,\"channel\":\"push\",\"timestamp\":" + t + "}";
        return InboundMessage.of(
                new RawRecord(null, json.getBytes(StandardCharsets.UTF_8), "in", 0, 0));
    }

    static final class Collected implements WatermarkOutput {
        final List<Long> marks = new ArrayList<>();

        @Override
        public void emitWatermark(Watermark w) {
            marks.add(w.getTimestamp());
        }

        @Override
        public void markIdle() {}

        @Override
        public void markActive() {}
    }

    @Test
    void trailsTheHighestMessageTime() {
        MessageTime.Generator g = new MessageTime.Generator();
        Collected out = new Collected();
        g.onPeriodicEmit(out);
        assertTrue(out.marks.isEmpty(), "no watermark before the first message");
        g.onEvent(at(DAY_1_NOON), DAY_1_NOON, out);
        g.onEvent(at(DAY_1_NOON - 1000), DAY_1_NOON - 1000, out);
        g.onPeriodicEmit(out);
        assertEquals(
                List.of(DAY_1_NOON - MessageTime.MAX_OUT_OF_ORDERNESS.toMillis() - 1), out.marks);
    }

    @Test
    void malformedRecordsNeverMoveEventTime() {
        MessageTime.Generator g = new MessageTime.Generator();
        Collected out = new Collected();
        g.onEvent(at(DAY_1_NOON), DAY_1_NOON, out);
        InboundMessage bad = InboundMessage.of(new RawRecord(null, "x".getBytes(), "in", 0, 1));
        long kafkaTime = System.currentTimeMillis();
        assertEquals(
                Long.MIN_VALUE,
                new MessageTime.MessageTimestamp().extractTimestamp(bad, kafkaTime));
        g.onEvent(bad, kafkaTime, out);
        g.onPeriodicEmit(out);
        assertEquals(
                DAY_1_NOON - MessageTime.MAX_OUT_OF_ORDERNESS.toMillis() - 1, out.marks.get(0));
    }

    @Test
    void aTimestampFarInTheFutureCountsAsADayAhead() {
        MessageTime.Generator g = new MessageTime.Generator();
        Collected out = new Collected();
        long year2099 = 4_070_908_800_000L;
        long before = System.currentTimeMillis();
        g.onEvent(at(year2099), year2099, out);
        g.onPeriodicEmit(out);
        long limit = System.currentTimeMillis() + MessageTime.MAX_AHEAD_OF_WALL_CLOCK.toMillis();
        assertTrue(
                out.marks.get(0) <= limit && out.marks.get(0) >= before,
                "watermark " + out.marks.get(0));
    }
}
