package io.freqcap.operators.ingest;

import static io.freqcap.schema.Instants.DAY_1_NOON;
import static io.freqcap.schema.Instants.HOUR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.junit.jupiter.api.Test;

class MessageTimeTest {
    static final long SLACK = MessageTime.MAX_OUT_OF_ORDERNESS.toMillis() + 1;

    /** The wall clock the generator reads: a day after {@link #DAY_1_NOON} unless moved. */
    private long now = DAY_1_NOON + 24 * HOUR;

    private final MessageTime.Generator g = new MessageTime.Generator(() -> now);
    private final Collected out = new Collected();

    static InboundMessage at(long t, int partition) {
        String json =
                "{\"messageId\":\"m\",\"userId\":1,\"channel\":\"push\",\"timestamp\":" + t + "}";
        return InboundMessage.of(
                new RawRecord(null, json.getBytes(StandardCharsets.UTF_8), "in", partition, 0));
    }

    void event(long t, int partition) {
        g.onEvent(at(t, partition), t, out);
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
        g.onPeriodicEmit(out);
        assertTrue(out.marks.isEmpty(), "no watermark before the first message");
        event(DAY_1_NOON, 0);
        event(DAY_1_NOON - 1000, 0);
        g.onPeriodicEmit(out);
        assertEquals(List.of(DAY_1_NOON - SLACK), out.marks);
    }

    @Test
    void malformedRecordsNeverMoveEventTime() {
        event(DAY_1_NOON, 0);
        InboundMessage bad = InboundMessage.of(new RawRecord(null, "x".getBytes(), "in", 0, 1));
        long kafkaTime = now;
        assertEquals(
                Long.MIN_VALUE,
                new MessageTime.MessageTimestamp().extractTimestamp(bad, kafkaTime));
        g.onEvent(bad, kafkaTime, out);
        g.onPeriodicEmit(out);
        assertEquals(DAY_1_NOON - SLACK, out.marks.get(0));
    }

    @Test
    void messagesDatedAheadOfTheWallClockCountAsTheWallClock() {
        long year2099 = 4_070_908_800_000L;
        event(year2099, 0);
        event(DAY_1_NOON + 47 * HOUR, 1); // "tomorrow's campaign"
        g.onPeriodicEmit(out);
        assertEquals(List.of(now - SLACK), out.marks);
    }

    @Test
    void thePartitionFurthestBehindHoldsEventTimeBack() {
        event(DAY_1_NOON, 0);
        event(DAY_1_NOON - 6 * HOUR, 3); // a producer replaying its backlog
        g.onPeriodicEmit(out);
        assertEquals(List.of(DAY_1_NOON - 6 * HOUR - SLACK), out.marks);
        event(DAY_1_NOON - 2 * HOUR, 3);
        g.onPeriodicEmit(out);
        assertEquals(DAY_1_NOON - 2 * HOUR - SLACK, out.marks.get(1));
    }

    @Test
    void anIdlePartitionStopsHoldingItBackAndTheMarkNeverGoesBack() {
        event(DAY_1_NOON - 6 * HOUR, 3);
        now += MessageTime.IDLE_AFTER.toMillis() / 2;
        event(DAY_1_NOON, 0);
        g.onPeriodicEmit(out);
        assertEquals(List.of(DAY_1_NOON - 6 * HOUR - SLACK), out.marks);

        now += MessageTime.IDLE_AFTER.toMillis() / 2 + 1; // partition 3 idle, 0 not
        g.onPeriodicEmit(out);
        assertEquals(List.of(DAY_1_NOON - 6 * HOUR - SLACK, DAY_1_NOON - SLACK), out.marks);

        event(DAY_1_NOON - 5 * HOUR, 3); // wakes up behind: the mark stays where it was
        g.onPeriodicEmit(out);
        assertEquals(2, out.marks.size());
    }

    @Test
    void everyPartitionIdleEmitsNothing() {
        event(DAY_1_NOON, 0);
        now += MessageTime.IDLE_AFTER.toMillis() + 1;
        g.onPeriodicEmit(out);
        assertTrue(out.marks.isEmpty());
    }
}
