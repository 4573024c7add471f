package io.freqcap.operators.capping.held;

import static io.freqcap.operators.capping.CappingFixtures.NOV_22_10H;
import static io.freqcap.operators.capping.CappingFixtures.NOV_22_22H10;
import static io.freqcap.operators.capping.CappingFixtures.NOV_22_23H30;
import static io.freqcap.operators.capping.CappingFixtures.NOV_23_8H;
import static io.freqcap.operators.capping.CappingFixtures.PRIORITY_CONFIG;
import static io.freqcap.operators.capping.CappingFixtures.promotion;
import static io.freqcap.operators.capping.CappingHarnesses.audits;
import static io.freqcap.operators.capping.CappingHarnesses.checkpoint;
import static io.freqcap.operators.capping.CappingHarnesses.deliveries;
import static io.freqcap.operators.capping.CappingHarnesses.heldRecords;
import static io.freqcap.operators.capping.CappingHarnesses.liveHeld;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.capping.CappingFunction;
import io.freqcap.operators.capping.CappingHarnesses;
import io.freqcap.operators.capping.CappingOperator;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.capping.outputs.CappingMetrics;
import io.freqcap.operators.capping.outputs.HeldNotices;
import io.freqcap.schema.Records;
import io.freqcap.schema.SharedFiles;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.held.HeldNotice;
import io.freqcap.schema.message.InboundMessage;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongPredicate;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The held-messages topic (contract.md §12) as the capping operator writes it, on RocksDB: a notice
 * when a message is held, a tombstone when it leaves the hold, whichever way; what a start must
 * tombstone or notice; so that the topic's live keys are what the state holds.
 */
public class HeldTopicTest {
    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    /** A held topic that is empty, or holds these keys live. */
    static HeldNotices.LiveKeys topicWith(String... keys) {
        return (ownsUser, ownsOthers) -> HeldNotices.Start.of(owned(ownsUser, ownsOthers, keys));
    }

    static List<byte[]> owned(LongPredicate ownsUser, boolean ownsOthers, String... keys) {
        List<byte[]> out = new ArrayList<>();
        for (String k : keys) {
            Long user = HeldNotice.userOf(k.getBytes(StandardCharsets.UTF_8));
            if (user == null ? ownsOthers : ownsUser.test(user)) {
                out.add(k.getBytes(StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    /**
     * A held topic with nothing committed at the start, and a transaction open then that commits
     * records of these keys once the task has started (handed over at its first poll).
     */
    static HeldNotices.LiveKeys committedLater(String... keys) {
        return (ownsUser, ownsOthers) ->
                new HeldNotices.Start(
                        List.of(),
                        new HeldNotices.Later() {
                            private List<byte[]> left = owned(ownsUser, ownsOthers, keys);

                            @Override
                            public List<byte[]> poll() {
                                List<byte[]> out = left;
                                left = List.of();
                                return out;
                            }

                            @Override
                            public boolean done() {
                                return left.isEmpty();
                            }

                            @Override
                            public void close() {}
                        });
    }

    static CappingSettings withTopic(String config, String... live) {
        return CappingSettings.of(config).withHeldTopic(topicWith(live));
    }

    InboundMessage message(String id, long user, long t, String campaign, int priority) {
        return Records.message(id, user, t)
                .timezone("Europe/Berlin")
                .campaign(campaign)
                .priority(priority)
                .inbound(harnesses.nextOffset());
    }

    /** The day's message, then the promotion held for the morning. */
    void promotionHeld(KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ?, ?> h)
            throws Exception {
        h.setProcessingTime(NOV_22_10H);
        h.processElement(message("m-000390", 42, NOV_22_10H, "daily", 0), NOV_22_10H);
        h.setProcessingTime(NOV_22_22H10);
        h.processElement(promotion(), NOV_22_22H10);
    }

    /** A checkpoint at 22:10 of a task on the held topic that holds the promotion (closed). */
    OperatorSubtaskState promotionHeldCheckpoint() throws Exception {
        var h = harnesses.open(withTopic(PRIORITY_CONFIG));
        promotionHeld(h);
        OperatorSubtaskState snapshot = checkpoint(h, 1, NOV_22_22H10);
        harnesses.close(h);
        return snapshot;
    }

    /** The notice of m-000400, as contract.md §12 shows it (written here when ../shared is not). */
    static JsonNode exampleNotice() throws Exception {
        try {
            return Json.MAPPER.readTree(SharedFiles.read("contract/examples/held-notice.json"));
        } catch (org.opentest4j.TestAbortedException e) {
            return Json.MAPPER.readTree(
                    "{\"messageId\": \"m-000400\", \"userId\": 42, \"segment\": \"*\","
                            + " \"channel\": \"push\", \"category\": \"marketing\", \"campaignId\":"
                            + " \"weekend-promo\", \"priority\": 10, \"timestamp\": 1763845800000,"
                            + " \"sendAt\": 1763881200000, \"timezone\": \"Europe/Berlin\","
                            + " \"configVersion\": 11, \"heldBy\": [{\"scope\": \"all\","
                            + " \"calendar\": \"day\", \"max\": 1, \"count\": 1}, {\"scope\":"
                            + " \"quiet-hours\", \"from\": \"21:00\", \"to\": \"08:00\"}]}");
        }
    }

    /**
     * The contract's Berlin story (§6, §12): m-000400's notice is the example's, field for field;
     * its tombstone comes right after its PREEMPTED record; the alert that took its place is
     * noticed, then tombstoned when it goes out at 08:00.
     */
    @Test
    void theBerlinStoryOnTheHeldTopic() throws Exception {
        var h = harnesses.open(withTopic(PRIORITY_CONFIG));
        promotionHeld(h);
        List<String[]> held = heldRecords(h);
        assertEquals(1, held.size());
        assertEquals("42/m-000400", held.get(0)[0]);
        assertEquals(exampleNotice(), Json.MAPPER.readTree(held.get(0)[1]));

        h.setProcessingTime(NOV_22_23H30);
        h.processElement(message("m-000412", 42, NOV_22_23H30, "price-alert", 80), NOV_22_23H30);
        h.prepareSnapshotPreBarrier(2); // notices go out before the checkpoint's barrier
        var side = new ArrayList<>(h.getSideOutput(CappingFunction.AUDIT));
        // In the audit sink's order: the notice, PREEMPTED, its tombstone, the alert's notice.
        assertEquals(4, side.size(), side.toString());
        assertTrue(side.get(0).getValue().held());
        assertEquals(
                "PREEMPTED",
                Json.MAPPER.readTree(side.get(1).getValue().json()).get("decision").asText());
        assertTrue(side.get(2).getValue().held());
        assertArrayEquals(bytes("42/m-000400"), side.get(2).getValue().key());
        assertNull(side.get(2).getValue().json(), "a tombstone");
        assertArrayEquals(bytes("42/m-000412"), side.get(3).getValue().key());
        JsonNode alert = Json.MAPPER.readTree(side.get(3).getValue().json());
        assertEquals(80, alert.get("priority").asInt());
        assertEquals(NOV_23_8H, alert.get("sendAt").asLong());
        assertEquals(Set.of("42/m-000412"), liveHeld(heldRecords(h)).keySet());

        // Delivered at 08:00: its tombstone rides with its delivery, in one transaction.
        h.setProcessingTime(NOV_23_8H);
        assertEquals(2, deliveries(h).size());
        List<String[]> after = heldRecords(h);
        assertEquals("42/m-000412", after.get(after.size() - 1)[0]);
        assertNull(after.get(after.size() - 1)[1]);
        assertEquals(Map.of(), liveHeld(after));
        assertEquals(4, h.getSideOutput(CappingFunction.AUDIT).size());
    }

    /**
     * A hold shorter than a checkpoint interval (contract.md §12): held and delivered before the
     * next barrier, its tombstone rides with its delivery in the delivery sink's transaction and no
     * notice is written, so a read_committed reader never sees the tombstone without the delivery.
     */
    @Test
    void aHoldThatEndsBeforeTheBarrierHasItsTombstoneWithItsDeliveryOnly() throws Exception {
        var h = harnesses.open(withTopic(PRIORITY_CONFIG));
        promotionHeld(h);
        h.setProcessingTime(NOV_23_8H);
        checkpoint(h, 1, NOV_23_8H);
        var side = h.getSideOutput(CappingFunction.AUDIT);
        assertTrue(
                side == null || side.stream().noneMatch(r -> r.getValue().held()),
                "nothing of the held topic in the audit sink's transaction: " + side);
        List<String> main = new ArrayList<>();
        for (Delivery d : h.extractOutputValues()) {
            main.add(
                    d.isHeldTopic()
                            ? new String(d.key(), StandardCharsets.UTF_8)
                                    + (d.value() == null ? " tombstone" : " notice")
                            : new String(d.value(), StandardCharsets.UTF_8).contains("m-000400")
                                    ? "m-000400 delivered"
                                    : "other delivered");
        }
        assertEquals(
                List.of("other delivered", "m-000400 delivered", "42/m-000400 tombstone"), main);
    }

    /**
     * A transaction open on the held topic when the job starts (an earlier run's or another
     * writer's) commits after it: the start did not wait for it, and the keys it committed are
     * written again as the task holds them (contract.md §12): the one held is noticed, the other
     * tombstoned, so the topic's live keys are what is held.
     */
    @Test
    void keysATransactionOpenAtTheStartCommitsLaterAreWrittenAgainAsHeld() throws Exception {
        var restored =
                harnesses.open(
                        CappingSettings.of(PRIORITY_CONFIG)
                                .withHeldTopic(committedLater("42/m-000400", "42/m-gone")),
                        promotionHeldCheckpoint());
        restored.setProcessingTime(NOV_22_22H10 + CappingOperator.FOLLOW_MILLIS);
        List<String[]> records = heldRecords(restored);
        assertEquals(Set.of("42/m-000400"), liveHeld(records).keySet());
        assertTrue(
                records.stream().anyMatch(r -> r[0].equals("42/m-gone") && r[1] == null),
                "the key nothing holds is tombstoned");
    }

    /**
     * A message noticed before a checkpoint is tombstoned with its delivery, in the delivery sink's
     * transaction; restored from that checkpoint, nothing is noticed again.
     */
    @Test
    void aTombstoneAfterACheckpointRidesWithTheDelivery() throws Exception {
        var restored =
                harnesses.open(
                        withTopic(PRIORITY_CONFIG, "42/m-000400"), promotionHeldCheckpoint());
        assertEquals(List.of(), heldRecords(restored), "restored with notices on: nothing to do");
        restored.setProcessingTime(NOV_23_8H);
        List<Delivery> out = restored.extractOutputValues();
        assertEquals(2, out.size(), out.toString());
        assertTrue(new String(out.get(0).value(), StandardCharsets.UTF_8).contains("m-000400"));
        assertTrue(out.get(1).isHeldTopic());
        assertArrayEquals(bytes("42/m-000400"), out.get(1).key());
        assertEquals(0, audits(restored).size());
    }

    /**
     * Records of one key between two checkpoints take one way: m-000400, noticed before a
     * checkpoint, is released with its tombstone among the deliveries; a failed receipt frees its
     * id, it is sent again and held again: its new notice follows the tombstone through the same
     * sink, so the topic ends with it live.
     */
    @Test
    void aMessageHeldAgainAfterItsReleaseIsNoticedThroughTheSameSink() throws Exception {
        var h = harnesses.open(withTopic(PRIORITY_CONFIG));
        promotionHeld(h);
        checkpoint(h, 1, NOV_22_22H10);
        h.setProcessingTime(NOV_23_8H);
        h.processElement(Records.failed("m-000400", 42, harnesses.nextOffset()), NOV_23_8H);
        long nov23late = Instant.parse("2025-11-23T21:30:00Z").toEpochMilli(); // 22:30 in Berlin
        h.setProcessingTime(nov23late);
        h.processElement(message("m-000400", 42, nov23late, "weekend-promo", 10), nov23late);
        h.prepareSnapshotPreBarrier(2); // its notice goes out before the checkpoint's barrier
        List<Delivery> main = h.extractOutputValues();
        List<String> held = new ArrayList<>();
        for (Delivery d : main) {
            if (d.isHeldTopic()) {
                held.add(
                        new String(d.key(), StandardCharsets.UTF_8)
                                + (d.value() == null ? " tombstone" : " notice"));
            }
        }
        assertEquals(List.of("42/m-000400 tombstone", "42/m-000400 notice"), held);
        assertEquals(Set.of("42/m-000400"), liveHeld(heldRecords(h)).keySet());
        assertEquals(
                1,
                heldRecords(h).stream().filter(r -> r[1] != null).count()
                        - held.stream().filter(x -> x.endsWith("notice")).count(),
                "the first notice among the audit records, the second among the deliveries");
    }

    /**
     * A restore whose topic does not match its state (a rollback to an older savepoint, a topic
     * created again) is made to match: the message held but not live gets its notice, the live key
     * nothing holds its tombstone, and a key already right is left alone.
     */
    @Test
    void aRestoreMakesTheTopicMatchWhatIsHeld() throws Exception {
        var h = harnesses.open(withTopic(PRIORITY_CONFIG));
        promotionHeld(h);
        h.processElement(message("m-7", 7, NOV_22_22H10, "spring", 0), NOV_22_22H10);
        OperatorSubtaskState snapshot = checkpoint(h, 1, NOV_22_22H10);
        harnesses.close(h);
        var restored =
                harnesses.open(
                        withTopic(PRIORITY_CONFIG, "7/m-7", "42/later-run", "042/m-000400"),
                        snapshot);
        List<String[]> records = heldRecords(restored);
        assertEquals(3, records.size(), records.toString());
        // The tombstones first (a key not written as this job writes it among them), the notice
        // last.
        assertNull(records.get(0)[1]);
        assertNull(records.get(1)[1]);
        assertEquals("42/m-000400", records.get(2)[0]);
        assertEquals(
                Set.of("42/m-000400", "7/m-7"),
                liveHeld(
                                new ArrayList<>(
                                        List.of(
                                                new String[] {"7/m-7", "{}"},
                                                new String[] {"42/later-run", "{}"},
                                                new String[] {"042/m-000400", "{}"})) {
                                    {
                                        addAll(records);
                                    }
                                })
                        .keySet());
    }

    /**
     * A start without state tombstones every key an earlier job left live, before anything else;
     * with two tasks, each tombstones the keys of its own key groups, task 0 the keys of no user.
     */
    @Test
    void aStartWithoutStateTombstonesWhatAnEarlierJobLeftLive() throws Exception {
        String[] live = {"42/m-1", "7/m-2", "1001/\ud83d\ude00", "not-a-user/x", "/y"};
        List<String> tombstoned = new ArrayList<>();
        for (int task = 0; task < 2; task++) {
            var h = harnesses.open(withTopic(PRIORITY_CONFIG, live), null, 2, task);
            for (String[] r : heldRecords(h)) {
                assertNull(r[1], "only tombstones");
                tombstoned.add(r[0]);
            }
        }
        assertEquals(new TreeSet<>(List.of(live)), new TreeSet<>(tombstoned));
        assertEquals(live.length, tombstoned.size(), "each key by one task");
    }

    /**
     * Restored from state written without the held topic (the option added on an upgrade), every
     * message held gets its notice, after the keys left live are tombstoned; a rescale to two tasks
     * on the way notices each message once.
     */
    @Test
    void aRestoreThatGainsTheOptionNoticesWhatIsHeld() throws Exception {
        var h = harnesses.open(CappingSettings.of(PRIORITY_CONFIG));
        promotionHeld(h);
        h.processElement(
                message("m-7", 7, NOV_22_22H10, "weekend-promo", 0), NOV_22_22H10); // quiet hours
        assertEquals(0, deliveries(h).stream().filter(Delivery::isHeldTopic).count());
        assertEquals(List.of(), heldRecords(h), "the option off: no notices");
        OperatorSubtaskState snapshot = checkpoint(h, 1, NOV_22_22H10);
        harnesses.close(h);

        List<String[]> records = new ArrayList<>();
        for (int task = 0; task < 2; task++) {
            var r =
                    harnesses.open(
                            withTopic(PRIORITY_CONFIG, "42/gone"),
                            CappingHarnesses.rescaled(List.of(snapshot), 2, task),
                            2,
                            task);
            records.addAll(heldRecords(r));
        }
        assertEquals(Set.of("42/m-000400", "7/m-7"), liveHeld(records).keySet());
        assertEquals(exampleNotice(), Json.MAPPER.readTree(liveHeld(records).get("42/m-000400")));
        assertEquals(
                1,
                records.stream().filter(r -> r[0].equals("42/gone")).count(),
                "the stale key tombstoned once");
    }

    static long heldDue(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h, long now, int hours) {
        var held =
                ((CappingFunction) ((CappingOperator) h.getOperator()).getUserFunction())
                        .heldSide()
                        .held();
        // what the heldDue gauges read (CappingMetrics#heldDue)
        return hours < CappingMetrics.HELD_DUE_HOURS
                ? held.hours().due(now, hours)
                : held.hours().dueFrom(now, hours);
    }

    /**
     * What waits by hour of send time (the heldDue gauges): the Berlin promotion, held at 22:10 for
     * 08:00 (07:00 UTC), is due in the tenth hour from 21:10 UTC; the alert that takes its place is
     * too; across a rescale to two tasks, one of them counts it; once out, none.
     */
    @Test
    void whatWaitsByHourOfSendTimeAcrossARescale() throws Exception {
        var h = harnesses.open(CappingSettings.of(PRIORITY_CONFIG));
        promotionHeld(h);
        h.processElement(message("m-7", 7, NOV_22_22H10, "spring", 0), NOV_22_22H10);
        assertEquals(2, heldDue(h, NOV_22_22H10, 10));
        assertEquals(0, heldDue(h, NOV_22_22H10, 9));
        assertEquals(0, heldDue(h, NOV_22_22H10, 24));
        assertEquals(2, heldDue(h, NOV_23_8H, 0), "due within the hour");
        assertEquals(2, heldDue(h, NOV_23_8H - 1, 1), "in the next hour");
        assertEquals(2, heldDue(h, NOV_23_8H + 3_600_000L, 0), "overdue counts as now");
        h.setProcessingTime(NOV_22_23H30);
        h.processElement(message("m-000412", 42, NOV_22_23H30, "price-alert", 80), NOV_22_23H30);
        assertEquals(2, heldDue(h, NOV_22_22H10, 10), "preempted out, the alert in");
        assertEquals(2, heldDue(h, NOV_22_22H10 - 2 * 86_400_000L, 24), "in 24 hours or more");
        OperatorSubtaskState snapshot = checkpoint(h, 1, NOV_22_23H30);
        harnesses.close(h);
        long sum = 0;
        List<KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ?, Delivery>> tasks =
                new ArrayList<>();
        for (int task = 0; task < 2; task++) {
            var r =
                    harnesses.open(
                            CappingSettings.of(PRIORITY_CONFIG),
                            CappingHarnesses.rescaled(List.of(snapshot), 2, task),
                            2,
                            task);
            sum += heldDue(r, NOV_22_23H30, 9);
            tasks.add(r);
        }
        assertEquals(2, sum, "each counted by the task that holds it");
        for (var r : tasks) {
            r.setProcessingTime(NOV_23_8H);
            assertEquals(0, heldDue(r, NOV_23_8H, 0));
        }
    }

    /** forget-user and cancel-held leave nothing of theirs live on the held topic. */
    @Test
    void forgetUserAndCancelHeldTombstoneWithTheirRecords() throws Exception {
        var h = harnesses.open(withTopic(PRIORITY_CONFIG));
        promotionHeld(h);
        h.processElement(message("m-7", 7, NOV_22_22H10, "spring", 0), NOV_22_22H10);
        h.processElement(message("m-8", 8, NOV_22_22H10 + 1, "spring", 0), NOV_22_22H10);
        assertEquals(Set.of("42/m-000400", "7/m-7", "8/m-8"), liveHeld(heldRecords(h)).keySet());

        h.processBroadcastElement(Records.forgetUser(42), NOV_22_22H10);
        h.processBroadcastElement(
                Records.config("{\"command\":\"cancel-held\",\"userId\":8,\"messageId\":\"m-8\"}"),
                NOV_22_22H10);
        assertEquals(Set.of("7/m-7"), liveHeld(heldRecords(h)).keySet());
        var side = new ArrayList<>(h.getSideOutput(CappingFunction.AUDIT));
        int forgotten = indexOf(side, "FORGOTTEN");
        assertArrayEquals(bytes("42/m-000400"), side.get(forgotten + 1).getValue().key());
        assertNull(side.get(forgotten + 1).getValue().json());
        int cancelled = indexOf(side, "CANCELLED");
        assertArrayEquals(bytes("8/m-8"), side.get(cancelled + 1).getValue().key());
        assertNull(side.get(cancelled + 1).getValue().json());
    }

    private static int indexOf(
            List<
                            org.apache.flink.streaming.runtime.streamrecord.StreamRecord<
                                    io.freqcap.schema.decision.AuditEvent>>
                    side,
            String decision)
            throws Exception {
        for (int i = 0; i < side.size(); i++) {
            var a = side.get(i).getValue();
            if (!a.held()
                    && decision.equals(Json.MAPPER.readTree(a.json()).get("decision").asText())) {
                return i;
            }
        }
        throw new AssertionError(decision + " not found");
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
