package io.freqcap.operators.capping.held;

import static io.freqcap.operators.capping.CappingFixtures.HOLD_TILL_MORNING;
import static io.freqcap.operators.capping.CappingFixtures.MINUTE;
import static io.freqcap.operators.capping.CappingFixtures.MORNING;
import static io.freqcap.operators.capping.CappingFixtures.NIGHT;
import static io.freqcap.operators.capping.CappingFixtures.ONE_A_DAY_HELD;
import static io.freqcap.operators.capping.CappingFixtures.heldNow;
import static io.freqcap.operators.capping.CappingFixtures.pushEntry;
import static io.freqcap.operators.capping.CappingHarnesses.audits;
import static io.freqcap.operators.capping.CappingHarnesses.deliveries;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.capping.CappingFixtures;
import io.freqcap.operators.capping.CappingHarnesses;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.capping.MirrorModel;
import io.freqcap.schema.Records;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Held messages bounded and recallable (contract.md §3 {@code maxHeld}, §5 CANCELLED, §7 {@code
 * cancel-held}, commands on a fresh start): in the capping operator, on RocksDB.
 */
public class HeldBoundsTest {
    /** Two a day: two night messages of a user both wait for the morning. */
    static final String TWO_A_NIGHT_HELD = ONE_A_DAY_HELD.replace("\"max\":1", "\"max\":2");

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    InboundMessage message(long user, long t, String campaign) {
        return message("m" + harnesses.offset(), user, t, campaign);
    }

    InboundMessage message(String id, long user, long t, String campaign) {
        Records.Message m = Records.message(id, user, t);
        return (campaign == null ? m : m.campaign(campaign)).inbound(harnesses.nextOffset());
    }

    static String keyOf(Delivery d) {
        return new String(d.key(), StandardCharsets.UTF_8);
    }

    @Test
    void aMessageHeldBeyondMaxHeldIsRejectedWithTheHoldViolation() throws Exception {
        var h =
                harnesses.open(
                        CappingSettings.of(
                                HOLD_TILL_MORNING.replace(
                                        "{\"version\":1,", "{\"version\":1,\"maxHeld\":3,")),
                        null);
        h.setProcessingTime(NIGHT);
        for (int i = 0; i < 4; i++) {
            h.processElement(message(42, NIGHT + i * MINUTE, null), NIGHT);
        }
        h.processElement(message(43, NIGHT, null), NIGHT);
        assertEquals(4, heldNow(h), "three of 42, one of 43");
        List<JsonNode> audits = audits(h);
        assertEquals(1, audits.size());
        JsonNode a = audits.get(0);
        assertEquals("REJECTED", a.get("decision").asText());
        assertEquals("m3", a.get("messageId").asText());
        assertEquals(2, a.get("violations").size(), a.toString());
        assertEquals("quiet-hours", a.get("violations").get(0).get("scope").asText());
        JsonNode hold = a.get("violations").get(1);
        assertEquals("hold", hold.get("scope").asText());
        assertEquals(3, hold.get("max").asInt());
        assertEquals(3, hold.get("count").asInt());
        assertNull(hold.get("window"));
        assertEquals(MORNING, a.get("retryAfter").asLong(), "the first waiting send time");
        // Once they are sent, the user may have three waiting again.
        h.setProcessingTime(MORNING);
        assertEquals(4, deliveries(h).size());
        assertEquals(0, heldNow(h));
        long nextNight = NIGHT + 86_400_000L;
        h.setProcessingTime(nextNight);
        h.processElement(message(42, nextNight, null), nextNight);
        assertEquals(1, heldNow(h));
        assertEquals(1, audits(h).size(), "held, not rejected");
    }

    @Test
    void theHoldViolationCountsEveryWaitingMessageAboveALoweredMaxHeld() throws Exception {
        String four = HOLD_TILL_MORNING.replace("{\"version\":1,", "{\"version\":1,\"maxHeld\":4,");
        var h = harnesses.open(CappingSettings.of(four), null);
        h.setProcessingTime(NIGHT);
        for (int i = 0; i < 4; i++) {
            h.processElement(message(42, NIGHT + i * MINUTE, null), NIGHT);
        }
        assertEquals(4, heldNow(h));
        h.processBroadcastElement(
                io.freqcap.schema.Records.config(
                        four.replace("\"version\":1,", "\"version\":2,")
                                .replace("\"maxHeld\":4", "\"maxHeld\":2")),
                NIGHT);
        h.processElement(message(42, NIGHT + 10 * MINUTE, null), NIGHT);
        JsonNode a = audits(h).get(audits(h).size() - 1);
        assertEquals("REJECTED", a.get("decision").asText(), a.toString());
        JsonNode hold = a.get("violations").get(a.get("violations").size() - 1);
        assertEquals("hold", hold.get("scope").asText());
        assertEquals(2, hold.get("max").asInt());
        assertEquals(4, hold.get("count").asInt(), "all that wait, not the bound: " + a);
    }

    /**
     * One user's 10,000 messages, each held to its own second: each is released by its own timer
     * (in order, once), also after a restore, and {@code heldNow} is right at once after the
     * restore, from the checkpointed counts.
     */
    @Test
    void tenThousandHeldMessagesOfOneUserAreReleasedOneByOneAcrossARestore() throws Exception {
        String config =
                "{\"version\":1,\"maxHeld\":10000,\"rules\":[{\"segment\":\"*\","
                        + "\"limits\":[{\"window\":\"1s\",\"max\":1},"
                        + "{\"window\":\"1d\",\"max\":100000}],\"hold\":\"1d\"}]}";
        long t0 = NIGHT;
        int n = 10_000;
        var h = harnesses.open(CappingSettings.of(config), null);
        h.setProcessingTime(t0);
        for (int i = 0; i < n; i++) {
            h.processElement(message(42, t0, null), t0);
        }
        assertEquals(1, deliveries(h).size(), "the first at once");
        assertEquals(n - 1, heldNow(h));
        h.setProcessingTime(t0 + 4_999_000L);
        assertEquals(5_000, deliveries(h).size());
        assertEquals(n - 5_000, heldNow(h));
        OperatorSubtaskState snapshot = h.snapshot(1, t0);
        harnesses.close(h);

        var restored = harnesses.open(CappingSettings.of(config), snapshot);
        assertEquals(n - 5_000, heldNow(restored), "counted without reading a held message");
        restored.setProcessingTime(t0 + 86_400_000L);
        List<Delivery> rest = deliveries(restored);
        assertEquals(n - 5_000, rest.size());
        for (int i = 0; i < rest.size(); i++) {
            assertEquals(t0 + (5_000 + i) * 1000L, rest.get(i).sendAt(), "in send-time order");
        }
        assertEquals(0, heldNow(restored));
    }

    @Test
    void cancelHeldWithdrawsACampaignsHeldMessagesOnceAndFreesTheirPlaces() throws Exception {
        var h = harnesses.open(CappingSettings.of(ONE_A_DAY_HELD).withMirror(true), null);
        MirrorModel redis = new MirrorModel();
        h.setProcessingTime(NIGHT);
        h.processElement(message("a-1", 42, NIGHT, "spring-sale"), NIGHT);
        h.processElement(message("b-1", 43, NIGHT, "spring-sale"), NIGHT);
        h.processElement(message("c-1", 44, NIGHT, "other"), NIGHT);
        redis.apply(h);
        assertEquals(List.of("a-1"), redis.ids(42));
        assertEquals(List.of("b-1"), redis.ids(43));
        // 42's place until the next morning is taken: a second message is rejected.
        h.processElement(message("a-2", 42, NIGHT + MINUTE, "other"), NIGHT);
        assertEquals("REJECTED", audits(h).get(0).get("decision").asText());
        OperatorSubtaskState beforeCancel = h.snapshot(1, NIGHT);

        h.processBroadcastElement(
                Records.config("{\"command\":\"cancel-held\",\"campaignId\":\"spring-sale\"}"),
                NIGHT);
        List<JsonNode> cancelled = audits(h).subList(1, audits(h).size());
        assertEquals(2, cancelled.size());
        for (JsonNode c : cancelled) {
            assertEquals("CANCELLED", c.get("decision").asText());
            assertEquals("cancel-held", c.get("reason").asText());
            assertEquals(MORNING, c.get("sendAt").asLong());
            assertEquals("*", c.get("segment").asText());
            assertEquals(1, c.get("configVersion").asLong());
            assertEquals("spring-sale", c.get("message").get("campaignId").asText());
            assertNull(c.get("violations"));
        }
        assertEquals(1, heldNow(h));
        redis.apply(h);
        assertNull(redis.key(42), "a-1 was all 42 counted: its key deleted");
        assertNull(redis.key(43));
        assertEquals(List.of("c-1"), redis.ids(44), "another campaign's message stays");

        // Applied twice: nothing more.
        h.processBroadcastElement(
                Records.config("{\"command\":\"cancel-held\",\"campaignId\":\"spring-sale\"}"),
                NIGHT);
        assertEquals(3, audits(h).size());
        // The place is free again, and the messageId too: sent again, it is decided anew.
        h.processElement(message("a-1", 42, NIGHT + 2 * MINUTE, "spring-sale"), NIGHT);
        assertEquals(3, audits(h).size(), "held again, not DUPLICATE or REJECTED");
        redis.apply(h);
        assertEquals(List.of(pushEntry(MORNING, "a-1")), redis.entries(42));
        OperatorSubtaskState afterCancel = h.snapshot(2, NIGHT);
        h.setProcessingTime(MORNING);
        assertEquals(
                List.of("42", "44"), deliveries(h).stream().map(d -> keyOf(d)).sorted().toList());
        harnesses.close(h);

        // Restored after the cancel: the cancelled messages never go out.
        var after = harnesses.open(CappingSettings.of(ONE_A_DAY_HELD), afterCancel);
        assertEquals(2, heldNow(after));
        after.setProcessingTime(MORNING);
        assertEquals(
                List.of("42", "44"),
                deliveries(after).stream().map(d -> keyOf(d)).sorted().toList());
        harnesses.close(after);

        // Restored before it (the attempt that cancelled failed): the command, read again,
        // cancels them again, and only 44's goes out.
        var before = harnesses.open(CappingSettings.of(ONE_A_DAY_HELD), beforeCancel);
        before.processBroadcastElement(
                Records.config(
                        "{\"command\":\"cancel-held\",\"campaignId\":\"spring-sale\","
                                + "\"userId\":43}"),
                NIGHT);
        assertEquals(1, audits(before).size(), "only user 43's");
        assertEquals("b-1", audits(before).get(0).get("messageId").asText());
        before.setProcessingTime(MORNING);
        assertEquals(
                List.of("42", "44"),
                deliveries(before).stream().map(d -> keyOf(d)).sorted().toList());
    }

    @Test
    void aBadCancelHeldIsInvalidControl() throws Exception {
        var h = harnesses.open(CappingSettings.of(ONE_A_DAY_HELD), null);
        h.processBroadcastElement(Records.config("{\"command\":\"cancel-held\"}"), NIGHT);
        h.processBroadcastElement(
                Records.config("{\"command\":\"cancel-held\",\"campaignId\":\"x\",\"userId\":-1}"),
                NIGHT);
        h.processBroadcastElement(
                Records.config(
                        "{\"command\":\"cancel-held\",\"campaignId\":\"x\",\"messageId\":\"m\"}"),
                NIGHT);
        h.processBroadcastElement(
                Records.config(
                        "{\"command\":\"cancel-held\",\"userId\":42,\"messageId\":\""
                                + "x".repeat(129)
                                + "\"}"),
                NIGHT);
        h.processBroadcastElement(
                Records.config("{\"command\":\"cancel-held\",\"campaignId\":null,\"userId\":null}"),
                NIGHT);
        List<JsonNode> audits = audits(h);
        assertEquals(5, audits.size());
        for (JsonNode a : audits) {
            assertEquals("INVALID_CONTROL", a.get("decision").asText());
        }
        assertTrue(
                audits.get(0).get("error").asText().startsWith("cancel-held needs a campaignId"));
        assertTrue(audits.get(1).get("error").asText().startsWith("userId:"));
        assertTrue(audits.get(2).get("error").asText().startsWith("messageId:"));
        assertTrue(audits.get(3).get("error").asText().startsWith("messageId:"));
        assertTrue(
                audits.get(4).get("error").asText().startsWith("cancel-held needs a campaignId"));
    }

    /**
     * contract.md §7 (v5): {@code cancel-held} by user withdraws every message held for the user,
     * whatever its campaign; by user and messageId that one message. Twice, or for a message not
     * held, nothing more.
     */
    @Test
    void cancelHeldByUserOrByMessageWithdrawsThoseAndNoOthers() throws Exception {
        var h = harnesses.open(CappingSettings.of(TWO_A_NIGHT_HELD).withMirror(true), null);
        MirrorModel redis = new MirrorModel();
        h.setProcessingTime(NIGHT);
        h.processElement(message("a-1", 42, NIGHT, "spring-sale"), NIGHT);
        h.processElement(message("a-2", 42, NIGHT + MINUTE, null), NIGHT);
        h.processElement(message("b-1", 43, NIGHT, "spring-sale"), NIGHT);
        h.processElement(message("b-2", 43, NIGHT + MINUTE, "other"), NIGHT);
        assertEquals(4, heldNow(h));
        redis.apply(h);
        assertEquals(List.of("a-1", "a-2"), redis.ids(42));
        assertEquals(List.of("b-1", "b-2"), redis.ids(43));

        // One message of one user: a-2 has no campaign, so only this form reaches it alone.
        String one = "{\"command\":\"cancel-held\",\"userId\":42,\"messageId\":\"a-2\"}";
        h.processBroadcastElement(Records.config(one), NIGHT);
        assertEquals(List.of("a-2"), cancelledIds(h));
        h.processBroadcastElement(Records.config(one), NIGHT);
        h.processBroadcastElement(
                Records.config("{\"command\":\"cancel-held\",\"userId\":43,\"messageId\":\"a-1\"}"),
                NIGHT);
        assertEquals(List.of("a-2"), cancelledIds(h), "twice, or another user's id: nothing more");
        assertEquals(3, heldNow(h));
        int writes = redis.writes();
        redis.apply(h);
        assertEquals(writes + 1, redis.writes(), "only 42's key is written again");
        assertEquals(List.of("a-1"), redis.ids(42), "a-2 left the log");
        assertEquals(List.of("b-1", "b-2"), redis.ids(43));
        // a-2 no longer counts: 42's second place of the morning is free again.
        h.processElement(message("a-3", 42, NIGHT + 2 * MINUTE, null), NIGHT);
        assertEquals(4, heldNow(h), "held, not REJECTED");
        redis.apply(h);
        assertEquals(
                List.of(pushEntry(MORNING, "a-1"), pushEntry(MORNING, "a-3")), redis.entries(42));

        // Every message of one user, whatever its campaign.
        h.processBroadcastElement(
                Records.config("{\"command\":\"cancel-held\",\"userId\":43}"), NIGHT);
        assertEquals(List.of("a-2", "b-1", "b-2"), cancelledIds(h));
        for (JsonNode c : audits(h)) {
            assertEquals("cancel-held", c.get("reason").asText());
            assertEquals(MORNING, c.get("sendAt").asLong());
        }
        assertEquals(2, heldNow(h));
        redis.apply(h);
        assertNull(redis.key(43), "nothing of 43 counts any more");
        assertEquals(List.of("a-1", "a-3"), redis.ids(42));

        h.setProcessingTime(MORNING);
        assertEquals(List.of("42", "42"), deliveries(h).stream().map(d -> keyOf(d)).toList());
        assertEquals(
                List.of("a-1", "a-3"),
                deliveries(h).stream()
                        .map(d -> new String(d.value(), StandardCharsets.UTF_8))
                        .map(v -> v.replaceAll(".*\"messageId\": *\"([^\"]+)\".*", "$1"))
                        .sorted()
                        .toList());
    }

    private static List<String> cancelledIds(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h)
            throws Exception {
        return audits(h).stream()
                .filter(a -> a.get("decision").asText().equals("CANCELLED"))
                .map(a -> a.get("messageId").asText())
                .sorted()
                .toList();
    }

    static ControlRecord atOffset(String json, long offset) {
        return CappingFixtures.atOffset(Records.config(json), offset);
    }

    /**
     * Contract v4 §7: a job that starts without state does not apply the commands already on the
     * config topic (configs still count); a restored job keeps the offsets of its first start.
     */
    @Test
    void commandsOnTheTopicBeforeAStatelessStartAreNotApplied() throws Exception {
        CappingSettings settings =
                CappingSettings.of(CappingFixtures.dailyConfig(1, 1))
                        .withCommandsFrom(Map.of(0, 10L));
        var h = harnesses.open(settings, null);
        long day = 86_400_000L;
        h.processElement(message(42, NIGHT, null), NIGHT);
        h.processBroadcastElement(
                atOffset("{\"command\":\"forget-user\",\"userId\":42}", 4), NIGHT);
        h.processBroadcastElement(atOffset(CappingFixtures.dailyConfig(2, 1), 5), NIGHT);
        h.processElement(message(42, NIGHT + MINUTE, null), NIGHT);
        List<JsonNode> audits = audits(h);
        assertEquals(1, audits.size(), "no INVALID_CONTROL for the skipped command");
        assertEquals("REJECTED", audits.get(0).get("decision").asText(), "42 not forgotten");
        assertEquals(2, audits.get(0).get("configVersion").asLong(), "the old config applies");

        h.processBroadcastElement(
                atOffset("{\"command\":\"forget-user\",\"userId\":42}", 10), NIGHT);
        h.processElement(message(42, NIGHT + 2 * MINUTE, null), NIGHT);
        assertEquals(2, deliveries(h).size(), "forgotten: decided as a new user");
        OperatorSubtaskState snapshot = h.snapshot(1, NIGHT);
        harnesses.close(h);

        // Restored, with the offsets a new submission would have computed: its own stay.
        var restored = harnesses.open(settings.withCommandsFrom(Map.of(0, 100L)), snapshot);
        restored.processBroadcastElement(
                atOffset("{\"command\":\"forget-user\",\"userId\":42}", 20), NIGHT);
        restored.processElement(message(42, NIGHT + day - MINUTE, null), NIGHT);
        assertEquals(1, deliveries(restored).size(), "offset 20 applied: forgotten again");
    }
}
