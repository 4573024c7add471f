package io.freqcap.schema;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.ConcurrentHashMap;

/** Time zones by IANA id, made once each, and the offset a counted message keeps. */
public final class Zones {
    private Zones() {}

    public static final String UTC = "UTC";

    private static final ConcurrentHashMap<String, ZoneId> BY_ID = new ConcurrentHashMap<>();

    /** The zone of a known id ({@link OutboundMessage#isKnownZone}). */
    public static ZoneId of(String id) {
        ZoneId known = BY_ID.get(id); // cheaper than computeIfAbsent when present, as it always is
        return known != null ? known : BY_ID.computeIfAbsent(id, ZoneId::of);
    }

    /** The zone of a message: its own if it has one, else the config's (contract.md §3). */
    public static ZoneId of(String messageZone, String configZone) {
        return of(messageZone != null ? messageZone : configZone);
    }

    /**
     * Seconds east of UTC at {@code timestamp} in the message's zone: what a counted entry keeps,
     * so that its calendar period is known whatever zone later messages are in (contract.md §6).
     *
     * @param messageZone the message's {@code timezone}, or null
     * @param configZone the config's {@code timezone}
     */
    public static int offsetSeconds(String messageZone, String configZone, long timestamp) {
        if (messageZone == null && UTC.equals(configZone)) {
            return 0;
        }
        ZoneId zone = of(messageZone, configZone);
        if (zone == ZoneOffset.UTC) {
            return 0;
        }
        return zone.getRules().getOffset(Instant.ofEpochMilli(timestamp)).getTotalSeconds();
    }
}
