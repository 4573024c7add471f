package io.freqcap.operators.capping;

import java.time.Instant;
import java.time.ZoneId;

/**
 * A message's zone for one decision, remembering the last offset it looked up: the calendar limits
 * of a config ask for the offset at the message's time once per limit and per rule set (rules and
 * shadow), and {@code java.time} works it out anew each time. Not thread-safe: one per decision.
 */
final class ZoneClock {
    private final ZoneId zone;
    private long lastAt = Long.MIN_VALUE;
    private int lastOffset;

    ZoneClock(ZoneId zone) {
        this.zone = zone;
    }

    ZoneId zone() {
        return zone;
    }

    /** Seconds east of UTC at {@code t} in this zone. */
    int offsetAt(long t) {
        if (t != lastAt || lastAt == Long.MIN_VALUE) {
            lastOffset = zone.getRules().getOffset(Instant.ofEpochMilli(t)).getTotalSeconds();
            lastAt = t;
        }
        return lastOffset;
    }
}
