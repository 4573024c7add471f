package io.freqcap.job;

import io.freqcap.schema.ControlRecord;
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
        return new DataGeneratorSource<>(
                ControlRecord::sweep,
                Long.MAX_VALUE,
                RateLimiterStrategy.perSecond(1000.0 / interval.toMillis()),
                TypeInformation.of(ControlRecord.class));
    }
}
