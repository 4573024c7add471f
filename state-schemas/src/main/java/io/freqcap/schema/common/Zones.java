package io.freqcap.schema.common;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.concurrent.ConcurrentHashMap;

/** Time zones by IANA id, made once each, and the offset a counted message keeps. */
public final class Zones {
    private Zones() {}

    public static final String UTC = "UTC";

    private static final ConcurrentHashMap<String, Zone> BY_ID = new ConcurrentHashMap<>();

    /**
     * A zone and the span of time around the last instant asked about over which its offset stays
     * the same (between two of its {@link ZoneRules} transitions): messages of a day fall in one
     * span, so their offsets are a range check instead of {@code ZoneRules.getOffset}'s search of
     * the year's transitions. Spans come from {@code java.time} only. Shared by every task: a span
     * is immutable and replaced whole.
     */
    public static final class Zone {
        private final ZoneId id;
        private final ZoneRules rules;
        private volatile Span span = new Span(0, 0, 0);

        /** [from, until) in epoch milliseconds, at {@code offset} seconds east of UTC. */
        private record Span(long from, long until, int offset) {}

        Zone(ZoneId id) {
            this.id = id;
            this.rules = id.getRules();
        }

        public ZoneId id() {
            return id;
        }

        /** Seconds east of UTC at {@code t} (epoch milliseconds). */
        public int offsetAt(long t) {
            Span s = span;
            if (t >= s.from && t < s.until) {
                return s.offset;
            }
            Instant at = Instant.ofEpochMilli(t);
            ZoneOffset offset = rules.getOffset(at);
            if (rules.isFixedOffset()) {
                span = new Span(Long.MIN_VALUE, Long.MAX_VALUE, offset.getTotalSeconds());
                return offset.getTotalSeconds();
            }
            // A transition's offsets differ on its two sides, so one that leaves (or enters) this
            // offset bounds the span; anything else and the span is t alone.
            ZoneOffsetTransition before = rules.previousTransition(at);
            ZoneOffsetTransition after = rules.nextTransition(at);
            long from =
                    before == null
                            ? Long.MIN_VALUE
                            : before.getOffsetAfter().equals(offset)
                                    ? millis(before.getInstant())
                                    : t;
            long until =
                    after == null
                            ? Long.MAX_VALUE
                            : after.getOffsetBefore().equals(offset)
                                    ? millis(after.getInstant())
                                    : t + 1;
            span = new Span(Math.min(from, t), Math.max(until, t + 1), offset.getTotalSeconds());
            return offset.getTotalSeconds();
        }

        private static long millis(Instant i) {
            try {
                return i.toEpochMilli();
            } catch (ArithmeticException e) {
                return i.getEpochSecond() < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
            }
        }
    }

    /** The zone of a known id ({@code OutboundMessage.isKnownZone}), with its offsets. */
    public static Zone zone(String id) {
        Zone known = BY_ID.get(id); // cheaper than computeIfAbsent when present, as it always is
        return known != null ? known : BY_ID.computeIfAbsent(id, k -> new Zone(ZoneId.of(k)));
    }

    /** The zone of a message: its own if it has one, else the config's (contract.md §3). */
    public static Zone zone(String messageZone, String configZone) {
        return zone(messageZone != null ? messageZone : configZone);
    }

    /** The zone of a known id ({@code OutboundMessage.isKnownZone}). */
    public static ZoneId of(String id) {
        return zone(id).id();
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
        return zone(messageZone, configZone).offsetAt(timestamp);
    }
}
