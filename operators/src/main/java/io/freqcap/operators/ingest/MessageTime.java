package io.freqcap.operators.ingest;

import io.freqcap.schema.message.InboundMessage;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.LongSupplier;
import org.apache.flink.api.common.eventtime.SerializableTimestampAssigner;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;

/**
 * Event time for the capping operator. Decisions read each message's own timestamp; event time only
 * drives state cleanup, so the watermark errs on the late side (docs/design.md, "State cleanup"):
 *
 * <ul>
 *   <li>it is the lowest over the input partitions this task reads of each partition's highest
 *       message time, so one partition replaying a backlog holds cleanup back for all;
 *   <li>a partition without messages for {@link #IDLE_AFTER} (wall clock) stops holding it back;
 *       when it wakes up behind, the capping operator's swept horizon makes what it cannot decide
 *       exactly STALE;
 *   <li>it never passes the wall clock: messages dated ahead (a campaign scheduled for tomorrow, a
 *       timestamp in microseconds) must not end event time and clear histories still needed;
 *   <li>it trails all that by {@link #MAX_OUT_OF_ORDERNESS};
 *   <li>malformed records have no message time and never move it.
 * </ul>
 */
public final class MessageTime {
    private MessageTime() {}

    public static final Duration MAX_OUT_OF_ORDERNESS = Duration.ofMinutes(5);
    public static final Duration IDLE_AFTER = Duration.ofMinutes(1);

    public static WatermarkStrategy<InboundMessage> messages() {
        return WatermarkStrategy.<InboundMessage>forGenerator(
                        ctx -> new Generator(System::currentTimeMillis))
                .withTimestampAssigner(new MessageTimestamp())
                .withIdleness(IDLE_AFTER);
    }

    static final class MessageTimestamp implements SerializableTimestampAssigner<InboundMessage> {
        private static final long serialVersionUID = 1L;

        @Override
        public long extractTimestamp(InboundMessage m, long kafkaTimestamp) {
            return m.isMalformed() ? Long.MIN_VALUE : m.timestamp();
        }
    }

    /** Per input partition: the highest message time seen and when (wall clock) it last had one. */
    public static final class Generator implements WatermarkGenerator<InboundMessage> {
        private final LongSupplier wallClock;
        private long[] highest = new long[0];
        private long[] lastSeen = new long[0];
        private long emitted = Long.MIN_VALUE;

        public Generator(LongSupplier wallClock) {
            this.wallClock = wallClock;
        }

        @Override
        public void onEvent(InboundMessage m, long timestamp, WatermarkOutput output) {
            if (m.isMalformed()) {
                return;
            }
            int p = Math.max(0, m.partition());
            if (p >= highest.length) {
                int n = Math.max(p + 1, highest.length * 2);
                int from = highest.length;
                highest = Arrays.copyOf(highest, n);
                lastSeen = Arrays.copyOf(lastSeen, n);
                Arrays.fill(highest, from, n, Long.MIN_VALUE);
                Arrays.fill(lastSeen, from, n, Long.MIN_VALUE);
            }
            highest[p] = Math.max(highest[p], timestamp);
            lastSeen[p] = wallClock.getAsLong();
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {
            long now = wallClock.getAsLong();
            long low = Long.MAX_VALUE;
            for (int p = 0; p < highest.length; p++) {
                if (lastSeen[p] != Long.MIN_VALUE && lastSeen[p] >= now - IDLE_AFTER.toMillis()) {
                    low = Math.min(low, highest[p]);
                }
            }
            if (low == Long.MAX_VALUE) {
                return; // every partition idle: nothing moves event time
            }
            long mark = Math.min(low, now) - MAX_OUT_OF_ORDERNESS.toMillis() - 1;
            if (mark > emitted) {
                emitted = mark;
                output.emitWatermark(new Watermark(mark));
            }
        }
    }
}
