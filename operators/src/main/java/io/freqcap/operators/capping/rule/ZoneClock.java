package io.freqcap.operators.capping.rule;

import io.freqcap.schema.common.Zones;
import java.time.ZoneId;

/**
 * A message's zone for one decision: its offsets (remembered by {@link Zones.Zone} over the span
 * between two transitions) and its rules, for the period starts {@code retryAfter} needs.
 */
public final class ZoneClock {
    private final Zones.Zone zone;

    ZoneClock(Zones.Zone zone) {
        this.zone = zone;
    }

    ZoneId zone() {
        return zone.id();
    }

    /** Seconds east of UTC at {@code t} in this zone. */
    int offsetAt(long t) {
        return zone.offsetAt(t);
    }
}
