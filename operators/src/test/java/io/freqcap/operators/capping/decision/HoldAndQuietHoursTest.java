package io.freqcap.operators.capping.decision;

import static io.freqcap.schema.Configs.calendar;
import static io.freqcap.schema.Configs.rule;
import static io.freqcap.schema.Configs.version;
import static io.freqcap.schema.Configs.window;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.freqcap.operators.backtest.Backtest;
import io.freqcap.schema.Configs;
import io.freqcap.schema.Records;
import io.freqcap.schema.SharedFiles;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.AuditRecords;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.decision.Violation;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * "No push between 21:00 and 08:00, hold until morning" (contract.md §3, §5, §6), decided by the
 * job's own decision step: what is held and to when, what is rejected and why, what a held message
 * is delivered and mirrored with.
 */
class HoldAndQuietHoursTest {
    /** 22:00 in Berlin on 22 November 2025 (21:00 UTC), as in the contract's example. */
    static final long BERLIN_22H = Instant.parse("2025-11-22T21:00:00Z").toEpochMilli();

    /** 08:00 in Berlin the next morning. */
    static final long BERLIN_NEXT_8H = Instant.parse("2025-11-23T07:00:00Z").toEpochMilli();

    static String config(String hold) {
        Configs.Rule r =
                rule("*", calendar("day", 1), window("7d", 4)).quietHours("21:00", "08:00");
        return version(10).timezone("Europe/Berlin").rule(hold == null ? r : r.hold(hold)).json();
    }

    static byte[] message(String id, long t) {
        return ("{\"messageId\":\""
                        + id
                        + "\",\"userId\":42,\"channel\":\"push\",\"timestamp\":"
                        + t
                        + ",\"timezone\":\"Europe/Berlin\"}")
                .getBytes(StandardCharsets.UTF_8);
    }

    static Backtest start(String config) throws Exception {
        return Backtest.start(LimitConfig.parse(config), List.of(), s -> {});
    }

    @Test
    void withoutHoldAQuietHoursMessageIsRejectedAsTheContractsExampleSays() throws Exception {
        byte[] value = message("m-000311", BERLIN_22H);
        try (Backtest b = start(config(null))) {
            Decided d = b.decide(Records.inbound(value));
            assertEquals(Decision.REJECTED, d.decision());
            assertEquals(
                    Json.MAPPER.readTree(
                            SharedFiles.read("contract/examples/audit-rejected-quiet-hours.json")),
                    Json.MAPPER.readTree(d.audit(AuditRecords.DEFAULT_MAX_BYTES).json()));
        }
    }

    @Test
    void withHoldItIsHeldUntilMorningAndCountedThen() throws Exception {
        try (Backtest b = start(config("12h"))) {
            Decided first = b.decide(Records.inbound(message("m-1", BERLIN_22H)));
            assertEquals(Decision.ALLOWED, first.decision());
            assertEquals(BERLIN_NEXT_8H, first.verdict().sendAt());
            Delivery delivery = first.delivery();
            assertEquals(BERLIN_NEXT_8H, delivery.sendAt());
            assertArrayEquals("42".getBytes(StandardCharsets.UTF_8), delivery.key());

            // The next one, also at night: 23 November already holds the first (counted at its
            // send time), so the day limit lets it out only on the 24th, past the 12 h hold.
            Decided second = b.decide(Records.inbound(message("m-2", BERLIN_22H + 60_000)));
            assertEquals(Decision.REJECTED, second.decision());
            assertEquals(
                    List.of(Violation.quietHours("21:00", "08:00")),
                    second.verdict().violations(),
                    "22 November itself holds nothing counted");
            assertEquals(BERLIN_NEXT_8H + 86_400_000L, second.verdict().retryAfter());

            // In the morning, a message is not held: it fails the day limit at once.
            Decided morning = b.decide(Records.inbound(message("m-3", BERLIN_NEXT_8H + 1)));
            assertEquals(Decision.REJECTED, morning.decision());
            assertEquals("all", morning.verdict().violations().get(0).scope());
        }
    }

    @Test
    void aMessageOutsideQuietHoursThatPassesIsNotHeld() throws Exception {
        try (Backtest b = start(config("12h"))) {
            long noon = BERLIN_NEXT_8H + 4 * 3_600_000L;
            Decided d = b.decide(Records.inbound(message("m-1", noon)));
            assertEquals(Decision.ALLOWED, d.decision());
            assertNull(d.verdict().sendAt());
            assertNull(d.delivery().sendAt(), "no send-at header");
        }
    }

    /**
     * The contract's preemption story, under its example config (contract.md §6, {@code
     * examples/limit-config-priority.json}): the promotion's PREEMPTED record is {@code
     * examples/audit-preempted.json}, and the alert is held for 08:00 in its place.
     */
    @Test
    void theContractsPriceAlertTakesThePromotionsPlace() throws Exception {
        LimitConfig config =
                LimitConfig.parse(
                        new String(
                                SharedFiles.read("contract/examples/limit-config-priority.json"),
                                StandardCharsets.UTF_8));
        try (Backtest b = Backtest.start(config, List.of(), s -> {})) {
            long nov22at10 = Instant.parse("2025-11-22T09:00:00Z").toEpochMilli();
            b.decide(Records.inbound(message("m-000390", nov22at10)));
            Decided promo =
                    b.decide(
                            Records.inbound(
                                    ("{\"messageId\": \"m-000400\", \"userId\": 42,"
                                                    + " \"channel\": \"push\", \"priority\": 10,"
                                                    + " \"campaignId\": \"weekend-promo\","
                                                    + " \"timestamp\": 1763845800000,"
                                                    + " \"timezone\": \"Europe/Berlin\"}")
                                            .getBytes(StandardCharsets.UTF_8)));
            assertEquals(BERLIN_NEXT_8H, promo.verdict().sendAt());
            long at2330 = Instant.parse("2025-11-22T22:30:00Z").toEpochMilli();
            Decided alert =
                    b.decide(
                            Records.inbound(
                                    Records.message("m-000412", 42, at2330)
                                            .timezone("Europe/Berlin")
                                            .priority(80)
                                            .bytes()));
            assertEquals(Decision.ALLOWED, alert.decision());
            assertEquals(BERLIN_NEXT_8H, alert.verdict().sendAt());
            assertEquals(
                    Json.MAPPER.readTree(
                            SharedFiles.read("contract/examples/audit-preempted.json")),
                    Json.MAPPER.readTree(
                            alert.preemptions(AuditRecords.DEFAULT_MAX_BYTES).get(0).json()));
        }
    }
}
