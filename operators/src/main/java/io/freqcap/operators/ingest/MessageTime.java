package io.freqcap.operators.ingest;

import io.freqcap.schema.InboundMessage;
import java.time.Duration;
import org.apache.flink.api.common.eventtime.SerializableTimestampAssigner;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;

/**
 * Event time for the capping operator. Decisions read each message's own timestamp; event time only
 * drives state cleanup, so the watermark errs on the late side:
 *
 * <ul>
 *   <li>it trails the highest message timestamp seen by {@link #MAX_OUT_OF_ORDERNESS};
 *   <li>malformed records have no message time and never move it (their Kafka timestamp is the wall
 *       clock, which for a backfill is far ahead of message time);
 *   <li>a timestamp more than {@link #MAX_AHEAD_OF_WALL_CLOCK} ahead of the wall clock counts as
 *       that much ahead: one message stamped in the year 2099 by a bug upstream must not end event
 *       time and clear every history.
 * </ul>
 */
public final class MessageTime {
    private MessageTime() {}

    public static final Duration MAX_OUT_OF_ORDERNESS = Duration.ofMinutes(5);
    public static final Duration MAX_AHEAD_OF_WALL_CLOCK = Duration.ofDays(1);
    public static final Duration IDLE_AFTER = Duration.ofMinutes(1);

    public static WatermarkStrategy<InboundMessage> messages() {
        return WatermarkStrategy.<InboundMessage>forGenerator(ctx -> new Generator())
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

    static final class Generator implements WatermarkGenerator<InboundMessage> {
        private long max = Long.MIN_VALUE;

        @Override
        public void onEvent(InboundMessage m, long timestamp, WatermarkOutput output) {
            if (!m.isMalformed()) {
                long cap = System.currentTimeMillis() + MAX_AHEAD_OF_WALL_CLOCK.toMillis();
                max = Math.max(max, Math.min(timestamp, cap));
            }
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {
            if (max != Long.MIN_VALUE) {
                output.emitWatermark(new Watermark(max - MAX_OUT_OF_ORDERNESS.toMillis() - 1));
            }
        }
    }
}
