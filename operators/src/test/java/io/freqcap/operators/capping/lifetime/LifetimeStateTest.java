package io.freqcap.operators.capping.lifetime;

import static io.freqcap.operators.capping.CappingFixtures.auditDecisions;
import static io.freqcap.schema.Configs.lifetime;
import static io.freqcap.schema.Configs.rule;
import static io.freqcap.schema.Configs.version;
import static io.freqcap.schema.Configs.window;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.operators.capping.CappingHarnesses;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.schema.Records;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.lifetime.LifetimeCount;
import io.freqcap.schema.message.InboundMessage;
import java.time.Instant;
import java.util.List;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lifetime counts in the job's keyed state (contract.md §3, §7): counted from the first config with
 * a lifetime limit on, kept across restores and later configs, dropped by {@code end-campaign} and
 * {@code forget-user}.
 */
class LifetimeStateTest {
    static final long NOV_22 = Instant.parse("2025-11-22T10:00:00Z").toEpochMilli();
    static final long DAY = 86_400_000L;

    static final String PLAIN = version(1).rule(rule("*", window("1d", 10))).json();

    static String once(long version) {
        return version(version).rule(rule("*", window("1d", 10)).campaign(lifetime(1))).json();
    }

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    void send(KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ?, ?> h, long user, long t)
            throws Exception {
        sendTo(h, user, "spring", t);
    }

    private static long snapshots = 1_000;

    /** The count keyed state holds, as a checkpoint takes it (the task's cache written first). */
    static LifetimeCount count(KeyedBroadcastOperatorTestHarness<Long, ?, ?, ?> h, long user)
            throws Exception {
        h.snapshot(++snapshots, 0);
        MapState<String, LifetimeCount> s = CappingHarnesses.keyed(h, user, LifetimeStore.STATE);
        return s.get("spring");
    }

    static ControlRecord command(String json) {
        return Records.config(json);
    }

    @Test
    void countingStartsWithTheFirstLifetimeConfigAndGoesOnUnderLaterOnes() throws Exception {
        var h = harnesses.open(CappingSettings.of(PLAIN));
        send(h, 42, NOV_22);
        assertNull(count(h, 42), "no lifetime config yet: nothing counted");
        h.processBroadcastElement(command(once(2)), 0);
        send(h, 42, NOV_22 + DAY);
        assertEquals(new LifetimeCount(1, NOV_22 + DAY), count(h, 42));
        send(h, 42, NOV_22 + 2 * DAY);
        assertEquals(List.of("REJECTED"), auditDecisions(h), "the one before it does not count");
        // a later config without lifetime limits: still counting
        h.processBroadcastElement(command(version(3).rule(rule("*", window("1d", 10))).json()), 0);
        send(h, 42, NOV_22 + 3 * DAY);
        assertEquals(new LifetimeCount(2, NOV_22 + 3 * DAY), count(h, 42));

        OperatorSubtaskState snapshot = h.snapshot(1, 1);
        harnesses.close(h);
        var restored = harnesses.open(CappingSettings.of(PLAIN), snapshot);
        send(restored, 42, NOV_22 + 4 * DAY);
        assertEquals(
                new LifetimeCount(3, NOV_22 + 4 * DAY),
                count(restored, 42),
                "a restore goes on counting, whatever config it starts with");
    }

    @Test
    void endCampaignDropsEveryUsersCountAndForgetUserOnesOwn() throws Exception {
        var h = harnesses.open(CappingSettings.of(once(1)));
        for (long user = 1; user <= 3; user++) {
            send(h, user, NOV_22);
        }
        h.processBroadcastElement(command("{\"command\":\"forget-user\",\"userId\":1}"), 0);
        assertNull(count(h, 1));
        assertEquals(new LifetimeCount(1, NOV_22), count(h, 2));
        h.processBroadcastElement(
                command("{\"command\":\"end-campaign\",\"campaignId\":\"spring\"}"), 0);
        assertNull(count(h, 2));
        assertNull(count(h, 3));
        send(h, 2, NOV_22 + DAY);
        assertTrue(auditDecisions(h).isEmpty(), "the campaign counts afresh: " + auditDecisions(h));
        assertEquals(new LifetimeCount(1, NOV_22 + DAY), count(h, 2));
    }

    @Test
    void aHeldMessageCountsAtItsSendTimeAndACancelledOneGivesItsPlaceBack() throws Exception {
        String night =
                version(1)
                        .rule(
                                rule("*", window("1d", 10))
                                        .campaign(lifetime(1))
                                        .quietHours("21:00", "08:00")
                                        .hold("12h"))
                        .json();
        var h = harnesses.open(CappingSettings.of(night));
        long tenPm = Instant.parse("2025-11-22T22:00:00Z").toEpochMilli();
        long eightAm = Instant.parse("2025-11-23T08:00:00Z").toEpochMilli();
        send(h, 42, tenPm);
        assertEquals(new LifetimeCount(1, eightAm), count(h, 42), "its send time is the latest");
        h.processBroadcastElement(
                command("{\"command\":\"cancel-held\",\"campaignId\":\"spring\"}"), 0);
        assertEquals(List.of("CANCELLED"), auditDecisions(h));
        assertEquals(new LifetimeCount(0, eightAm), count(h, 42), "none counted, the latest stays");
        send(h, 42, eightAm + DAY);
        assertEquals(List.of("CANCELLED"), auditDecisions(h), "the place is free again");
    }

    @Test
    void aBrokenEndCampaignIsInvalidControl() throws Exception {
        var h = harnesses.open(CappingSettings.of(once(1)));
        send(h, 2, NOV_22);
        h.processBroadcastElement(command("{\"command\":\"end-campaign\"}"), 0);
        assertEquals(List.of("INVALID_CONTROL"), auditDecisions(h));
        assertFalse(count(h, 2) == null, "nothing dropped");
    }

    void sendTo(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ?, ?> h,
            long user,
            String campaign,
            long t)
            throws Exception {
        h.processElement(
                Records.message("m" + harnesses.offset(), user, t)
                        .campaign(campaign)
                        .inbound(harnesses.nextOffset()),
                t);
    }

    /**
     * Each campaign's count read back, whatever way the task keeps it: a user's counts in one cache
     * slot, a user with more campaigns or longer campaignIds than a slot holds one at a time, users
     * sharing a slot of a small cache, or no cache; written at a snapshot, read after a restore.
     */
    @Test
    void everyWayOfKeepingCountsKeepsEveryCount() throws Exception {
        String config = version(1).rule(rule("*", window("1d", 1000)).campaign(lifetime(1))).json();
        List<String> campaigns = new java.util.ArrayList<>();
        for (int i = 0; i < 20; i++) {
            campaigns.add(i % 7 == 6 ? "x".repeat(126) + String.format("%02d", i) : "c" + i);
        }
        for (int slots : new int[] {0, 2, 1 << 10}) {
            var settings = CappingSettings.of(config).withHistoryCache(slots);
            var h = harnesses.open(settings);
            // user 1: one campaign; users 2..5: three; user 6: all twenty
            for (long user = 1; user <= 6; user++) {
                int n = user == 1 ? 1 : user == 6 ? campaigns.size() : 3;
                for (int i = 0; i < n; i++) {
                    sendTo(h, user, campaigns.get(i), NOV_22 + i * 60_000L);
                }
            }
            assertEquals(List.of(), auditDecisions(h), "slots " + slots + ": each allowed once");
            OperatorSubtaskState snapshot = h.snapshot(1, 1);
            for (long user = 1; user <= 6; user++) {
                sendTo(h, user, campaigns.get(0), NOV_22 + DAY);
            }
            assertEquals(6, auditDecisions(h).size(), "slots " + slots + ": " + auditDecisions(h));
            harnesses.close(h);

            var restored = harnesses.open(settings, snapshot);
            for (long user = 1; user <= 6; user++) {
                int n = user == 1 ? 1 : user == 6 ? campaigns.size() : 3;
                for (int i = 0; i < n; i++) {
                    sendTo(restored, user, campaigns.get(i), NOV_22 + DAY + i);
                }
                sendTo(restored, user, "new", NOV_22 + DAY + 100);
            }
            List<String> decided = auditDecisions(restored);
            assertEquals(1 + 4 * 3 + campaigns.size(), decided.size(), "slots " + slots);
            assertTrue(decided.stream().allMatch("REJECTED"::equals), decided.toString());
            restored.snapshot(2, 2);
            MapState<String, LifetimeCount> six =
                    CappingHarnesses.keyed(restored, 6, LifetimeStore.STATE);
            assertEquals(new LifetimeCount(1, NOV_22 + 19 * 60_000L), six.get(campaigns.get(19)));
            assertEquals(new LifetimeCount(1, NOV_22 + DAY + 100), six.get("new"));
            harnesses.close(restored);
        }
    }

    /**
     * The sweep drops the counts no message it leaves undecided reads any more (their latest send
     * time a retention or more before the swept horizon), and only those.
     */
    @Test
    void theSweepDropsCountsPastTheRetention() throws Exception {
        CappingSettings plain = CappingSettings.of(once(1));
        io.freqcap.operators.capping.Bounds b = plain.bounds();
        var h =
                harnesses.open(
                        plain.withBounds(
                                new io.freqcap.operators.capping.Bounds(
                                        b.maxRecordBytes(),
                                        b.maxSegmentBytes(),
                                        b.segmentUris(),
                                        b.maxFuture(),
                                        2 * DAY)));
        send(h, 1, NOV_22);
        send(h, 2, NOV_22 + 3 * DAY);
        send(h, 3, NOV_22 + 5 * DAY);
        // Twice the longest window (1d) behind the watermark: messages before 4 days on are STALE,
        // and counts last sent 2 days (the retention) or more before that read as 0 for all others.
        h.watermark(NOV_22 + 6 * DAY);
        h.processBroadcastElement(ControlRecord.sweep(1), 0);
        assertNull(count(h, 1), "latest 4 days before the horizon");
        assertEquals(new LifetimeCount(1, NOV_22 + 3 * DAY), count(h, 2), "1 day before it");
        assertEquals(new LifetimeCount(1, NOV_22 + 5 * DAY), count(h, 3));
        send(h, 2, NOV_22 + 5 * DAY - 1);
        assertEquals(List.of("REJECTED"), auditDecisions(h), "a kept count still counts");
        send(h, 1, NOV_22 + 6 * DAY);
        assertEquals(new LifetimeCount(1, NOV_22 + 6 * DAY), count(h, 1), "counted afresh");
    }

    /** Two tasks' counts merged into one and spread over three: every user's count goes along. */
    @Test
    void countsFollowTheirUsersThroughARescale() throws Exception {
        List<OperatorSubtaskState> snapshots = new java.util.ArrayList<>();
        for (int task = 0; task < 2; task++) {
            var h = harnesses.open(CappingSettings.of(once(1)), null, 2, task);
            for (long user = 1; user <= 8; user++) {
                if (org.apache.flink.runtime.state.KeyGroupRangeAssignment
                                .assignKeyToParallelOperator(user, 128, 2)
                        == task) {
                    send(h, user, NOV_22);
                }
            }
            assertEquals(List.of(), auditDecisions(h));
            snapshots.add(h.snapshot(1, 0));
            harnesses.close(h);
        }
        var one =
                harnesses.open(
                        CappingSettings.of(once(1)),
                        CappingHarnesses.rescaled(snapshots, 1, 0),
                        1,
                        0);
        for (long user = 1; user <= 8; user++) {
            send(one, user, NOV_22 + DAY);
        }
        assertEquals(8, auditDecisions(one).size(), "every count kept: " + auditDecisions(one));
        OperatorSubtaskState merged = one.snapshot(2, 0);
        harnesses.close(one);
        int rejected = 0;
        for (int task = 0; task < 3; task++) {
            var h =
                    harnesses.open(
                            CappingSettings.of(once(1)),
                            CappingHarnesses.rescaled(List.of(merged), 3, task),
                            3,
                            task);
            for (long user = 1; user <= 8; user++) {
                if (org.apache.flink.runtime.state.KeyGroupRangeAssignment
                                .assignKeyToParallelOperator(user, 128, 3)
                        == task) {
                    send(h, user, NOV_22 + 2 * DAY);
                }
            }
            rejected += auditDecisions(h).size();
            harnesses.close(h);
        }
        assertEquals(8, rejected, "and spread over three tasks");
    }

    /** One user with 10,000 campaigns counted: each count kept, through a restore. */
    @Test
    void tenThousandCampaignsForOneUser() throws Exception {
        String config =
                version(1).rule(rule("*", window("1d", 100_000)).campaign(lifetime(1))).json();
        var h = harnesses.open(CappingSettings.of(config));
        for (int i = 0; i < 10_000; i++) {
            sendTo(h, 42, "c" + i, NOV_22 + i);
        }
        assertEquals(List.of(), auditDecisions(h), "each campaign's first allowed");
        OperatorSubtaskState snapshot = h.snapshot(1, 1);
        harnesses.close(h);
        var restored = harnesses.open(CappingSettings.of(config), snapshot);
        restored.processBroadcastElement(
                command("{\"command\":\"end-campaign\",\"campaignId\":\"c5000\"}"), 0);
        for (String c : List.of("c0", "c5000", "c9999", "c10000")) {
            sendTo(restored, 42, c, NOV_22 + DAY);
        }
        assertEquals(
                List.of("REJECTED", "REJECTED"),
                auditDecisions(restored),
                "c0 and c9999 counted; c5000 ended and c10000 new are allowed");
    }
}
