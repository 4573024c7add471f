package io.freqcap.job;

import io.freqcap.schema.config.ControlRecord;
import java.time.Duration;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;

/**
 * A never-ending source of {@link ControlRecord.Kind#SWEEP} ticks, one per interval, broadcast to
 * every capping task so each clears the user histories nothing can need any more.
 */
public final class CleanupTicks {
    private CleanupTicks() {}

    public static DataGeneratorSource<ControlRecord> source(Duration interval) {
        return ticks(ControlRecord::sweep, interval);
    }

    /**
     * {@link ControlRecord.Kind#MIRROR_TICK}s: how soon a capping task whose mirror dropped writes
     * notices that Redis is back and rebuilds it.
     */
    public static DataGeneratorSource<ControlRecord> mirror(Duration interval) {
        return ticks(ControlRecord::mirrorTick, interval);
    }

    private static DataGeneratorSource<ControlRecord> ticks(
            org.apache.flink.connector.datagen.source.GeneratorFunction<Long, ControlRecord> tick,
            Duration interval) {
        return new DataGeneratorSource<>(
                tick,
                Long.MAX_VALUE,
                RateLimiterStrategy.perSecond(1000.0 / interval.toMillis()),
                TypeInformation.of(ControlRecord.class));
    }
}
