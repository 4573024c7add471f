package io.freqcap.operators.capping.lifetime;

import static io.freqcap.schema.Configs.lifetime;
import static io.freqcap.schema.Configs.reserving;
import static io.freqcap.schema.Configs.rule;
import static io.freqcap.schema.Configs.version;
import static io.freqcap.schema.Configs.window;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.freqcap.operators.backtest.Backtest;
import io.freqcap.operators.capping.Bounds;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.capping.receipt.Receipts;
import io.freqcap.schema.Records;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.AuditRecords;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.receipt.DeliveryReceipt;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * "Each campaign at most once per user, ever" (contract.md §3 lifetime limits), decided by the
 * job's own decision step over lifetime counts in memory: what breaks one, what it says, what frees
 * a place and how long a count lasts.
 */
class LifetimeLimitsTest {
    /** 10:00 UTC on 22 November 2025. */
    static final long NOV_22 = Instant.parse("2025-11-22T10:00:00Z").toEpochMilli();

    static final long DAY = 86_400_000L;

    static Backtest start(String config, long retentionMillis) throws Exception {
        Bounds d = Bounds.DEFAULTS;
        return Backtest.start(
                LimitConfig.parse(config),
                List.of(),
                new Bounds(
                        d.maxRecordBytes(),
                        d.maxSegmentBytes(),
                        d.segmentUris(),
                        d.maxFuture(),
                        retentionMillis),
                s -> {},
                Map.of());
    }

    static Backtest start(String config) throws Exception {
        return start(config, Bounds.DEFAULTS.lifetimeRetentionMillis());
    }

    /** A push message of user 42 (or {@code user}) in a campaign (null: none) of a priority. */
    static Decided decide(Backtest b, String id, long user, long t, String campaign, int priority) {
        String json =
                "{\"messageId\":\""
                        + id
                        + "\",\"userId\":"
                        + user
                        + ",\"channel\":\"push\",\"timestamp\":"
                        + t
                        + (campaign == null ? "" : ",\"campaignId\":\"" + campaign + "\"")
                        + ",\"priority\":"
                        + priority
                        + "}";
        return b.decide(Records.inbound(json.getBytes(StandardCharsets.UTF_8)));
    }

    static Decided decide(Backtest b, String id, long t, String campaign) {
        return decide(b, id, 42, t, campaign, 0);
    }

    static String violations(Decided d) throws Exception {
        return Json.MAPPER
                .readTree(d.audit(AuditRecords.DEFAULT_MAX_BYTES).json())
                .get("violations")
                .toString();
    }

    static final String ONCE =
            version(1).rule(rule("*", window("1d", 10)).campaign(lifetime(1))).json();

    @Test
    void aCampaignReachesEachUserOnceEverAndOthersAsBefore() throws Exception {
        try (Backtest b = start(ONCE)) {
            assertEquals(Decision.ALLOWED, decide(b, "m1", NOV_22, "spring").decision());
            // a month later, far past every window: still the second of the campaign
            Decided again = decide(b, "m2", NOV_22 + 30 * DAY, "spring");
            assertEquals(Decision.REJECTED, again.decision());
            assertEquals(
                    "[{\"scope\":\"campaign:spring\",\"lifetime\":true,\"max\":1,\"count\":1}]",
                    violations(again));
            assertNull(again.verdict().retryAfter(), "no time would let it through");
            assertEquals(Decision.ALLOWED, decide(b, "m3", NOV_22 + 30 * DAY, "summer").decision());
            assertEquals(Decision.ALLOWED, decide(b, "m4", NOV_22 + 31 * DAY, null).decision());
            assertEquals(
                    Decision.ALLOWED,
                    decide(b, "m5", 7, NOV_22 + 31 * DAY, "spring", 0).decision());
        }
    }

    @Test
    void aMaxOfZeroBlocksTheCampaignWithNothingCounted() throws Exception {
        String config = version(1).rule(rule("*", window("1d", 10)).campaign(lifetime(0))).json();
        try (Backtest b = start(config)) {
            Decided d = decide(b, "m1", NOV_22, "spring");
            assertEquals(
                    "[{\"scope\":\"campaign:spring\",\"lifetime\":true,\"max\":0,\"count\":0}]",
                    violations(d));
        }
    }

    @Test
    void itStandsWithTheOtherViolationsWhereTheCampaignsScopeBegins() throws Exception {
        String config =
                version(1)
                        .rule(rule("*", window("1d", 1)).campaign(lifetime(1), window("7d", 1)))
                        .json();
        try (Backtest b = start(config)) {
            decide(b, "m1", NOV_22, "spring");
            assertEquals(
                    "[{\"scope\":\"all\",\"window\":\"1d\",\"max\":1,\"count\":1},"
                            + "{\"scope\":\"campaign:spring\",\"lifetime\":true,\"max\":1,\"count\":1},"
                            + "{\"scope\":\"campaign:spring\",\"window\":\"7d\",\"max\":1,\"count\":1}]",
                    violations(decide(b, "m2", NOV_22 + 1, "spring")));
        }
    }

    @Test
    void aHoldNeverHelpsAMessageThatBreaksOne() throws Exception {
        String config =
                version(1).rule(rule("*", window("1d", 1)).campaign(lifetime(1)).hold("1d")).json();
        try (Backtest b = start(config)) {
            decide(b, "m1", NOV_22, "spring");
            // other campaigns are held past the day limit as before
            Decided other = decide(b, "m2", NOV_22 + 1, "summer");
            assertEquals(NOV_22 + DAY, other.verdict().sendAt());
            Decided d = decide(b, "m3", NOV_22 + 2, "spring");
            assertEquals(Decision.REJECTED, d.decision());
            assertNull(d.verdict().sendAt());
            assertNull(d.verdict().retryAfter());
        }
    }

    @Test
    void aReserveKeepsTheLastPlacesForImportantMessages() throws Exception {
        String config =
                version(1)
                        .rule(rule("*", window("1d", 10)).campaign(reserving(lifetime(2), 1, 70)))
                        .json();
        try (Backtest b = start(config)) {
            assertEquals(Decision.ALLOWED, decide(b, "m1", 42, NOV_22, "spring", 10).decision());
            Decided low = decide(b, "m2", 42, NOV_22 + DAY, "spring", 10);
            assertEquals(
                    "[{\"scope\":\"campaign:spring\",\"lifetime\":true,\"max\":2,\"reserved\":1,"
                            + "\"count\":1}]",
                    violations(low));
            assertEquals(
                    Decision.ALLOWED, decide(b, "m3", 42, NOV_22 + DAY, "spring", 70).decision());
            assertEquals(
                    Decision.REJECTED, decide(b, "m4", 42, NOV_22 + DAY, "spring", 100).decision());
        }
    }

    @Test
    void fatigueNeverLowersOne() throws Exception {
        String config =
                version(1)
                        .rule(
                                rule("*", window("30d", 100))
                                        .campaign(lifetime(3))
                                        .fatigue(1, "0.5", 0, "30d"))
                        .json();
        try (Backtest b = start(config)) {
            for (int i = 0; i < 3; i++) {
                assertEquals(
                        Decision.ALLOWED,
                        decide(b, "m" + i, NOV_22 + i * DAY, "spring").decision(),
                        "message " + i + " of a user who never opens");
            }
            assertEquals(Decision.REJECTED, decide(b, "m3", NOV_22 + 3 * DAY, "spring").decision());
        }
    }

    @Test
    void aCountPastTheRetentionReadsAsZeroAndStartsAfreshFromTheMessageCounted() throws Exception {
        long retention = 10 * DAY;
        try (Backtest b = start(ONCE, retention)) {
            decide(b, "m1", NOV_22, "spring");
            // a millisecond short of the retention: still counted
            Decided inside = decide(b, "m2", NOV_22 + retention - 1, "spring");
            assertEquals(Decision.REJECTED, inside.decision());
            // at the retention: 0, and counted afresh from this one
            assertEquals(
                    Decision.ALLOWED, decide(b, "m3", NOV_22 + retention, "spring").decision());
            Decided after = decide(b, "m4", NOV_22 + retention + 1, "spring");
            assertEquals(
                    "[{\"scope\":\"campaign:spring\",\"lifetime\":true,\"max\":1,\"count\":1}]",
                    violations(after));
        }
    }

    @Test
    void aFailedDeliveryFreesItsPlace() throws Exception {
        try (Backtest b = start(ONCE)) {
            decide(b, "m1", NOV_22, "spring");
            Receipts.Effect e =
                    b.receipt(
                            new DeliveryReceipt("m1", 42, DeliveryReceipt.FAILED, NOV_22 + 1000),
                            new Receipts.Time(NOV_22 + 1000, Long.MAX_VALUE));
            assertEquals(Receipts.Uncounted.class, e.getClass());
            assertEquals(Decision.ALLOWED, decide(b, "m2", NOV_22 + DAY, "spring").decision());
            assertEquals(Decision.REJECTED, decide(b, "m3", NOV_22 + 2 * DAY, "spring").decision());
        }
    }

    @Test
    void shadowRulesReadTheSameCounts() throws Exception {
        String config =
                version(1)
                        .rule(rule("*", window("1d", 10)))
                        .shadow(rule("*", window("1d", 10)).campaign(lifetime(1)))
                        .json();
        try (Backtest b = start(config)) {
            decide(b, "m1", NOV_22, "spring");
            Decided d = decide(b, "m2", NOV_22 + DAY, "spring");
            assertEquals(Decision.ALLOWED, d.decision(), "the rules have no lifetime limit");
            assertEquals(Decision.REJECTED, d.verdict().shadow().decision());
        }
    }

    @Test
    void aMoreImportantMessageTakesAHeldOnesLifetimePlace() throws Exception {
        String config =
                version(1)
                        .rule(rule("*", window("1d", 1)).campaign(lifetime(1)).hold("1d").preempt())
                        .json();
        try (Backtest b = start(config)) {
            decide(b, "m0", 42, NOV_22, null, 0); // fills the day: the next is held
            Decided low = decide(b, "m1", 42, NOV_22 + 1, "spring", 10);
            assertEquals(NOV_22 + DAY, low.verdict().sendAt());
            Decided high = decide(b, "m2", 42, NOV_22 + 2, "spring", 90);
            assertEquals(Decision.ALLOWED, high.decision());
            assertEquals(
                    List.of("m1"),
                    high.preempted().stream().map(h -> h.message().messageId()).toList());
            // the place is m2's now: m1's went back (one counted, not two) ...
            assertEquals(
                    Decision.REJECTED,
                    decide(b, "m3", 42, NOV_22 + 5 * DAY, "spring", 100).decision());
            // ... so once m2 fails to be delivered (after its send time), none is counted
            decide(b, "x", 7, NOV_22 + 5 * DAY, null, 0); // the clock passes m2's send time
            assertEquals(
                    Receipts.Uncounted.class,
                    b.receipt(
                                    new DeliveryReceipt(
                                            "m2", 42, DeliveryReceipt.FAILED, NOV_22 + 5 * DAY),
                                    new Receipts.Time(NOV_22 + 5 * DAY, Long.MAX_VALUE))
                            .getClass());
            assertEquals(
                    Decision.ALLOWED,
                    decide(b, "m4", 42, NOV_22 + 6 * DAY, "spring", 100).decision());
        }
    }
}
