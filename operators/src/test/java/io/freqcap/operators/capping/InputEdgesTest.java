package io.freqcap.operators.capping;

import static io.freqcap.operators.capping.CappingFixtures.NOV_22_10H;
import static io.freqcap.operators.capping.CappingFixtures.NOV_22_22H10;
import static io.freqcap.operators.capping.CappingFixtures.NOV_23_8H;
import static io.freqcap.operators.capping.CappingFixtures.THROWS;
import static io.freqcap.operators.capping.CappingHarnesses.audits;
import static io.freqcap.operators.capping.CappingHarnesses.deliveries;
import static io.freqcap.operators.capping.CappingHarnesses.keyed;
import static io.freqcap.schema.Configs.rule;
import static io.freqcap.schema.Configs.version;
import static io.freqcap.schema.Configs.window;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.Records;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import io.freqcap.schema.preference.UserPreferences;
import java.util.List;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The cases of issue 46, each at the edge of an input (contract.md §10, §2): the capping operator
 * on RocksDB decides them, one outcome each, and goes on deciding for the user and everyone else.
 */
class InputEdgesTest {
    /** Quiet 21:00-08:00 in Berlin, hold 12h, preempt: what a pause meets in the job. */
    static final String QUIET_CONFIG = CappingFixtures.PRIORITY_CONFIG;

    /** 08:00 UTC, 22 November 2025: the wall clock of the tests of one plain rolling limit. */
    static final long NOV_22_8H_UTC = 1_763_798_400_000L;

    /** 0:00 UTC on 1 January 10000: a pause from here on is for good (contract.md §10). */
    static final long YEAR_10000 = 253_402_300_800_000L;

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> open()
            throws Exception {
        return harnesses.openWithMirror(QUIET_CONFIG, null);
    }

    /** A task under {@code config} (no mirror) whose wall clock reads {@code now}. */
    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> openAt(
            String config, long now) throws Exception {
        var h = harnesses.open(CappingSettings.of(config));
        h.setProcessingTime(now);
        return h;
    }

    /** A message of user 42 as the plain rolling limits' tests send it: no channel, no zone. */
    InboundMessage plain(String id, long t) {
        return Records.message(id, 42, t).inbound(harnesses.nextOffset());
    }

    InboundMessage pausedUntil(long user, long until) {
        return Records.preference(
                user,
                "{\"userId\":" + user + ",\"version\":1,\"pausedUntil\":" + until + "}",
                harnesses.nextOffset());
    }

    InboundMessage message(String id, long user, long t) {
        return message(id, user, t, "Europe/Berlin");
    }

    InboundMessage message(String id, long user, long t, String zone) {
        return Records.message(id, user, t)
                .channel("push")
                .timezone(zone)
                .inbound(harnesses.nextOffset());
    }

    @Test
    void aUserPausedForGoodIsRejectedWithoutRetryUnderQuietHoursAndEveryoneElseGoesOn()
            throws Exception {
        var h = open();
        h.setProcessingTime(NOV_22_22H10);
        h.processElement(pausedUntil(42, Long.MAX_VALUE), NOV_22_22H10);
        h.processElement(pausedUntil(43, YEAR_10000), NOV_22_22H10);
        // In quiet hours and out of them: neither may ever be sent.
        // Long.MAX_VALUE is 07:12 UTC, in quiet hours that end at 08:00 UTC after it.
        h.processElement(message("m-1", 42, NOV_22_22H10, "UTC"), NOV_22_22H10);
        h.processElement(message("m-2", 42, NOV_22_10H), NOV_22_22H10);
        h.processElement(message("m-3", 43, NOV_22_22H10, "UTC"), NOV_22_22H10);
        // At the last instant a message may be stamped (the year 9999's end): still paused.
        h.processElement(message("m-5", 42, YEAR_10000 - 1), NOV_22_22H10);
        h.processElement(message("m-4", 44, NOV_22_10H), NOV_22_22H10);

        List<JsonNode> audits = audits(h);
        assertEquals(4, audits.size(), audits.toString());
        for (JsonNode a : audits) {
            assertEquals("REJECTED", a.get("decision").asText(), a.toString());
            assertTrue(a.get("retryAfter").isNull(), "paused for good: " + a);
            assertTrue(a.get("violations").toString().contains("preference:paused"), a.toString());
        }
        assertEquals(0, h.numProcessingTimeTimers(), "nothing is held through a pause for good");
        assertEquals(1, deliveries(h).size(), "user 44 is decided as ever");
    }

    @Test
    void aPauseEndingJustBeforeTheYear10000IsHeldOrRetriedAtItsEnd() throws Exception {
        var h = open();
        h.setProcessingTime(NOV_22_10H);
        long end = YEAR_10000 - 1;
        h.processElement(pausedUntil(42, end), NOV_22_10H);
        h.processElement(message("m-1", 42, NOV_22_10H), NOV_22_10H);
        JsonNode a = audits(h).get(0);
        assertEquals("REJECTED", a.get("decision").asText());
        assertTrue(a.get("retryAfter").asLong() >= end, a.toString());
    }

    @Test
    void messagesStampedAtTheLastMillisecondsAreDecidedUnderQuietHours() throws Exception {
        var h = open();
        h.setProcessingTime(NOV_22_10H);
        // MALFORMED from the year 10000 on; the last instants before it decided as ever.
        long[] stamps = {
            Long.MAX_VALUE, Long.MAX_VALUE - 86_400_000L, YEAR_10000, YEAR_10000 - 1, YEAR_10000 - 3
        };
        String[] zones = {"UTC", "Europe/Berlin", "Pacific/Kiritimati", "Pacific/Pago_Pago"};
        for (int i = 0; i < stamps.length; i++) {
            for (int z = 0; z < zones.length; z++) {
                h.processElement(message("m-" + i + z, 42, stamps[i], zones[z]), NOV_22_10H);
                h.processElement(message("n-" + i + z, 100 + i, stamps[i], zones[z]), NOV_22_10H);
            }
        }
        h.processElement(message("last", 7, NOV_22_10H), NOV_22_10H);
        int held = h.numProcessingTimeTimers();
        assertEquals(
                2 * stamps.length * zones.length + 1,
                audits(h).size() + deliveries(h).size() + held,
                "one outcome each: " + audits(h));
        assertEquals("last", lastDelivered(h));
    }

    /** Preferences as the state holds them, but whose opted-out categories throw when read. */
    static UserPreferences poisoned(UserPreferences p) {
        return p == null
                ? null
                : new UserPreferences(
                        p.userId(),
                        p.version(),
                        p.optOutChannels(),
                        THROWS,
                        p.pausedUntil(),
                        p.limits(),
                        p.channels(),
                        p.categories());
    }

    @Test
    void aMessageTheRuleThrowsOnIsAuditedMalformedAndTheTaskGoesOn() throws Exception {
        var h =
                harnesses.open(
                        CappingFixtures.withFaultyPreferences(
                                QUIET_CONFIG, InputEdgesTest::poisoned, p -> {}, 0), // no cache
                        null,
                        1,
                        0);
        h.setProcessingTime(NOV_22_10H);
        h.processElement(
                Records.preference(42L, "{\"userId\":42,\"version\":1}", harnesses.nextOffset()),
                NOV_22_10H);
        h.processElement(message("m-1", 42, NOV_22_10H), NOV_22_10H);
        h.processElement(message("m-2", 43, NOV_22_10H), NOV_22_10H);
        List<JsonNode> audits = audits(h);
        assertEquals(1, audits.size(), audits.toString());
        assertEquals("MALFORMED", audits.get(0).get("decision").asText());
        assertEquals(
                "could not be decided: IllegalStateException", audits.get(0).get("error").asText());
        assertEquals("m-2", lastDelivered(h), "everyone else is decided as ever");
        // Nothing of m-1 was counted: a snapshot and restore hold no trace of it.
        h.processElement(message("m-1", 42, NOV_22_10H + 1), NOV_22_10H);
        assertEquals(2, audits(h).size());
    }

    /**
     * The last guard covers writing and emitting what was decided too (contract.md §5): a message
     * whose hold cannot be written (its timer refused here) is audited MALFORMED, "could not be
     * decided", and the task goes on; a held message's timer that cannot be read back fails nothing
     * either.
     */
    @Test
    void aDecisionThatCannotBeWrittenIsAuditedMalformedAndTheTaskGoesOn() throws Exception {
        long poisoned = io.freqcap.schema.history.Fingerprints.of("m-poisoned");
        CappingFunction function =
                new CappingFunction(CappingSettings.of(QUIET_CONFIG)) {
                    @Override
                    public void useHeldTimers(
                            io.freqcap.operators.capping.held.HeldMessages.Timers t) {
                        super.useHeldTimers(
                                new io.freqcap.operators.capping.held.HeldMessages.Timers() {
                                    @Override
                                    public void register(long sendAt, long fingerprint)
                                            throws Exception {
                                        if (fingerprint == poisoned) {
                                            throw new IllegalStateException("no timer");
                                        }
                                        t.register(sendAt, fingerprint);
                                    }

                                    @Override
                                    public void delete(long sendAt, long fingerprint)
                                            throws Exception {
                                        t.delete(sendAt, fingerprint);
                                    }
                                });
                    }
                };
        var h = harnesses.open(function, null, 1, 0);
        h.setProcessingTime(NOV_22_22H10);
        // Quiet hours: both would be held to the morning.
        h.processElement(message("m-poisoned", 42, NOV_22_22H10), NOV_22_22H10);
        h.processElement(message("m-fine", 43, NOV_22_22H10), NOV_22_22H10);
        List<JsonNode> audits = audits(h);
        assertEquals(1, audits.size(), audits.toString());
        assertEquals(0, audits.get(0).at("/source/offset").asLong(), "m-poisoned's record");
        assertEquals("MALFORMED", audits.get(0).get("decision").asText());
        assertEquals(
                "could not be decided: IllegalStateException", audits.get(0).get("error").asText());
        // Nothing of it was written: erasing its user finds nothing of it held.
        h.processBroadcastElement(Records.forgetUser(42), NOV_22_22H10);
        assertEquals(1, audits(h).size(), "no FORGOTTEN record for it: " + audits(h));
        // The other waits for the morning and goes out then.
        h.setProcessingTime(NOV_23_8H);
        assertEquals("m-fine", lastDelivered(h));
        // A timer whose held message cannot be read back (a send time no hold has): no failure.
        h.setProcessingTime(NOV_23_8H + 1);
        function.heldSide().release(42, -1, poisoned, d -> {}, a -> {});
    }

    /**
     * A message held with value bytes today's reader refuses, as freqcap 0.3 held {@code
     * "priority": "high"} (an unknown field then): its fields were read when it was decided.
     */
    InboundMessage heldByAnEarlierReader(String id, long user, long t, String campaign) {
        InboundMessage in =
                Records.message(id, user, t)
                        .channel("push")
                        .timezone("Europe/Berlin")
                        .campaign(campaign)
                        .inbound(harnesses.nextOffset());
        String value =
                "{\"messageId\":\""
                        + id
                        + "\",\"userId\":"
                        + user
                        + ",\"channel\":\"push\",\"campaignId\":\""
                        + campaign
                        + "\",\"timestamp\":"
                        + t
                        + ",\"timezone\":\"Europe/Berlin\",\"priority\":\"high\"}";
        return new InboundMessage(
                in.routingKey(),
                in.message(),
                null,
                new RawRecord(
                        in.key(),
                        value.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        in.topic(),
                        in.partition(),
                        in.offset()),
                in.kind());
    }

    @Test
    void heldMessagesWhoseValueTodaysReaderRefusesAreWithdrawnEveryWayWithoutReadingIt()
            throws Exception {
        var h = open();
        h.setProcessingTime(NOV_22_22H10);
        for (long user = 1; user <= 4; user++) {
            h.processElement(
                    heldByAnEarlierReader("h-" + user, user, NOV_22_22H10, "promo-" + user),
                    NOV_22_22H10);
        }
        assertEquals(4, h.numProcessingTimeTimers(), "each held for 08:00");
        // An opt-out, forget-user, cancel-held and a preempting alert: one record each.
        h.processElement(
                Records.preference(
                        1L,
                        "{\"userId\":1,\"version\":1,\"optOut\":{\"channels\":[\"push\"]}}",
                        harnesses.nextOffset()),
                NOV_22_22H10);
        h.processBroadcastElement(Records.forgetUser(2), NOV_22_22H10);
        h.processBroadcastElement(
                Records.config("{\"command\":\"cancel-held\",\"campaignId\":\"promo-3\"}"),
                NOV_22_22H10);
        h.processElement(
                Records.message("alert", 4, NOV_22_22H10 + 60_000)
                        .channel("push")
                        .timezone("Europe/Berlin")
                        .campaign("price-alert")
                        .priority(80)
                        .inbound(harnesses.nextOffset()),
                NOV_22_22H10);
        List<String> outcomes = new java.util.ArrayList<>();
        for (JsonNode a : audits(h)) {
            outcomes.add(a.get("messageId").asText() + " " + a.get("decision").asText());
        }
        assertEquals(
                List.of("h-1 CANCELLED", "h-2 FORGOTTEN", "h-3 CANCELLED", "h-4 PREEMPTED"),
                outcomes.stream().sorted().toList());
        h.setProcessingTime(NOV_22_22H10 + 86_400_000L);
        assertEquals("alert", lastDelivered(h));
        assertEquals(1, deliveries(h).size(), "only the alert goes out");
    }

    /**
     * Messages stamped ahead of the wall clock (as {@code --max-future} allows): counting a later
     * one must not drop a held message that still waits from the history, where a pause, an
     * opt-out, preemption and {@code maxHeld} find it (found by the fuzz test).
     */
    @Test
    void aHeldMessageStillWaitingStaysInTheHistoryThatLaterMessagesPrune() throws Exception {
        String config =
                version(1)
                        .timezone("Europe/Berlin")
                        .rule(rule("*", window("1h", 5)).hold("1h").quietHours("07:30", "08:00"))
                        .json();
        long midnight = java.time.Instant.parse("2025-11-23T23:00:00Z").toEpochMilli();
        long quiet = midnight + (7 * 60 + 40) * 60_000L; // 07:40 Berlin on the 24th
        long noon = midnight + 12 * 3_600_000L;
        var h = openAt(config, midnight);
        h.processElement(message("early", 42, quiet), midnight);
        assertEquals(1, h.numProcessingTimeTimers(), "held for 08:00");
        h.processElement(message("noon", 42, noon), midnight);
        h.processElement(
                Records.preference(
                        42L,
                        "{\"userId\":42,\"version\":1,\"pausedUntil\":" + (noon - 1) + "}",
                        harnesses.nextOffset()),
                midnight);
        List<JsonNode> audits = audits(h);
        assertEquals(1, audits.size(), audits.toString());
        assertEquals("CANCELLED", audits.get(0).get("decision").asText());
        assertEquals("early", audits.get(0).get("messageId").asText());
        assertEquals(0, h.numProcessingTimeTimers());
    }

    /**
     * A message stamped most of a day ahead (within the default {@code --max-future}), then failed:
     * what it would have pruned is still there, so a later message meets the one it must (found by
     * the fuzz test: d was ALLOWED beside a in one hour of max 1, and b waited past an opt-out).
     */
    @Test
    void aMessageStampedAheadThenFailedLeavesTheHourItWouldHavePrunedIntact() throws Exception {
        long t = NOV_22_8H_UTC;
        var h = openAt(version(1).maxHeld(1).rule(rule("*", window("1h", 1)).hold("1h")).json(), t);
        h.processElement(plain("a", t), t);
        h.processElement(plain("b", t + 60_000), t);
        assertEquals(1, h.numProcessingTimeTimers(), "b held for t + 1h");
        h.processElement(
                Records.message("c", 42, t + 23 * 3_600_000L)
                        .channel("email")
                        .inbound(harnesses.nextOffset()),
                t);
        h.processElement(Records.failed("c", 42, harnesses.nextOffset()), t);
        h.processElement(plain("d", t + 120_000), t);
        JsonNode d = audits(h).get(audits(h).size() - 1);
        assertEquals("d", d.get("messageId").asText(), audits(h).toString());
        assertEquals("REJECTED", d.get("decision").asText(), "a fills the hour: " + d);
        h.processElement(
                Records.preference(
                        42L,
                        "{\"userId\":42,\"version\":1,\"optOut\":{\"channels\":[\"push\"]}}",
                        harnesses.nextOffset()),
                t);
        JsonNode b = audits(h).get(audits(h).size() - 1);
        assertEquals("b CANCELLED", b.get("messageId").asText() + " " + b.get("decision").asText());
    }

    /**
     * What the job keeps beyond pruning by stamped timestamps (messages stamped ahead of its clock)
     * never makes a message a DUPLICATE that a replay, or the job at another hour, would decide
     * anew (contract.md §2: decisions never read the wall clock).
     */
    @Test
    void aResentIdPastTheKeptWindowIsDecidedAnewWhateverTheClock() throws Exception {
        long t = NOV_22_8H_UTC;
        var h = openAt(version(1).rule(rule("*", window("1h", 2))).json(), t);
        h.processElement(plain("a", t), t);
        h.processElement(plain("b", t + 3 * 3_600_000L), t);
        h.processElement(plain("a", t + 3 * 3_600_000L + 60_000), t);
        assertEquals(3, deliveries(h).size(), "a is past twice the window: " + audits(h));
    }

    /**
     * Under {@code --max-future off} a user stamping far ahead of the clock (microseconds, the year
     * 3000) keeps a bounded history: pruning reads the clock at most a day behind the latest
     * stamped timestamp.
     */
    @Test
    void aUserStampingFarAheadKeepsABoundedHistory() throws Exception {
        String config = version(1).rule(rule("*", window("1h", 1))).json();
        Bounds off =
                new Bounds(
                        io.freqcap.schema.decision.AuditRecords.DEFAULT_MAX_BYTES,
                        Bounds.DEFAULTS.maxSegmentBytes(),
                        List.of(),
                        io.freqcap.schema.message.FutureBound.OFF,
                        Bounds.DEFAULTS.lifetimeRetentionMillis());
        var h = harnesses.open(CappingSettings.of(config).withBounds(off), null, 1, 0);
        long year3000 = java.time.Instant.parse("3000-01-01T00:00:00Z").toEpochMilli();
        h.setProcessingTime(NOV_22_8H_UTC);
        for (int i = 0; i < 200; i++) {
            long at = year3000 + i * 2 * 3_600_000L;
            h.processElement(plain("m-" + i, at), at);
        }
        assertEquals(200, deliveries(h).size());
        h.snapshot(1, 1); // histories reach keyed state
        var history = keyed(h, 42, io.freqcap.operators.capping.state.HistoryStore.STATE).value();
        // A day and twice the window behind the latest: 13 entries two hours apart, and it.
        assertTrue(
                history instanceof io.freqcap.schema.history.UserHistory u && u.size() <= 15,
                "a short history of at most 15 entries: " + history);
    }

    private static String lastDelivered(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> h)
            throws Exception {
        List<Delivery> d = deliveries(h);
        return io.freqcap.schema.common.Json.MAPPER
                .readTree(d.get(d.size() - 1).value())
                .get("messageId")
                .asText();
    }
}
