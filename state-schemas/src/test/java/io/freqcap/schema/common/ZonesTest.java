package io.freqcap.schema.common;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ZonesTest {
    private static final String[] ZONES = {
        "America/New_York",
        "Europe/Berlin",
        "Australia/Lord_Howe",
        "Asia/Kolkata",
        "UTC",
        "Asia/Singapore",
        "America/Sao_Paulo",
        "Pacific/Chatham"
    };

    private static final long YEAR_2025 = 1_735_689_600_000L;
    private static final long YEAR_MILLIS = 365L * 86_400_000L;

    /**
     * The remembered span must never answer for an instant on the other side of a transition:
     * instants at, just before and just after every transition of three years, then at random, in
     * an order that jumps back and forth across them, each checked against ZoneRules itself.
     */
    @Test
    void offsetsEqualTheZoneRulesAroundEveryTransitionInAnyOrder() {
        Random rnd = new Random(7);
        for (String id : ZONES) {
            ZoneRules rules = ZoneId.of(id).getRules();
            List<Long> instants = new ArrayList<>();
            for (ZoneOffsetTransition tr = rules.nextTransition(Instant.ofEpochMilli(YEAR_2025));
                    tr != null && tr.toEpochSecond() * 1000 < YEAR_2025 + 3 * YEAR_MILLIS;
                    tr = rules.nextTransition(tr.getInstant())) {
                long at = tr.toEpochSecond() * 1000;
                for (long d : new long[] {-3_600_000, -1, 0, 1, 3_600_000}) {
                    instants.add(at + d);
                }
            }
            for (int i = 0; i < 2_000; i++) {
                instants.add(YEAR_2025 + (long) (rnd.nextDouble() * 3 * YEAR_MILLIS));
            }
            java.util.Collections.shuffle(instants, rnd);
            Zones.Zone zone = Zones.zone(id);
            for (long t : instants) {
                assertEquals(
                        rules.getOffset(Instant.ofEpochMilli(t)).getTotalSeconds(),
                        zone.offsetAt(t),
                        id + " at " + Instant.ofEpochMilli(t));
                // The same instant again, now answered from the span it left.
                assertEquals(
                        rules.getOffset(Instant.ofEpochMilli(t)).getTotalSeconds(),
                        Zones.offsetSeconds(id, Zones.UTC, t),
                        id + " at " + Instant.ofEpochMilli(t));
            }
        }
    }

    @Test
    void aMessageWithoutAZoneTakesTheConfigsAndUtcIsZero() {
        long summer = 1_751_328_000_000L; // 2025-07-01T00:00Z
        assertEquals(-4 * 3600, Zones.offsetSeconds(null, "America/New_York", summer));
        assertEquals(2 * 3600, Zones.offsetSeconds("Europe/Berlin", "America/New_York", summer));
        assertEquals(0, Zones.offsetSeconds(null, Zones.UTC, summer));
        assertEquals(ZoneId.of("Asia/Kolkata"), Zones.of("Asia/Kolkata"));
    }
}
