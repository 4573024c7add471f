package io.freqcap.operators.capping.rule;

import static io.freqcap.schema.Instants.DAY;
import static io.freqcap.schema.Instants.DAY_1_MIDNIGHT;
import static io.freqcap.schema.Instants.DAY_1_NOON;
import static io.freqcap.schema.Instants.HOUR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.decision.Violations;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.OutboundMessage;
import java.util.List;
import org.junit.jupiter.api.Test;

class CappingRuleTest {
    static final long DAY_1_EVENING = DAY_1_MIDNIGHT + 20 * HOUR;
    static final long DAY_2_NOON = DAY_1_NOON + DAY;

    static final LimitConfig TWO_A_DAY_FIVE_A_WEEK =
            config(
                    "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":["
                            + "{\"window\":\"1d\",\"max\":2},{\"window\":\"7d\",\"max\":5}],"
                            + "\"channels\":{\"email\":[{\"window\":\"1d\",\"max\":1}]}}],"
                            + "\"exempt\":[\"transactional\"]}");

    static LimitConfig config(String json) {
        try {
            return LimitConfig.parse(json);
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    private final UserHistoryBuilder user = new UserHistoryBuilder(TWO_A_DAY_FIVE_A_WEEK);

    /** "Three a day, the third only for important messages" (contract.md §3 {@code reserve}). */
    static final LimitConfig THIRD_FOR_IMPORTANT =
            config(
                    "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\","
                            + "\"max\":3,\"reserve\":{\"slots\":1,\"priority\":70}}]}]}");

    @Test
    void theThirdPlaceOfTheDayIsKeptForImportantMessages() {
        UserHistoryBuilder u = new UserHistoryBuilder(THIRD_FOR_IMPORTANT);
        assertEquals(
                Decision.ALLOWED, u.sendWithPriority("m1", DAY_1_MIDNIGHT + HOUR, 0).decision());
        assertEquals(Decision.ALLOWED, u.sendWithPriority("m2", DAY_1_NOON, 10).decision());
        RuleStep.Result promo = u.sendWithPriority("m3", DAY_1_EVENING, 69);
        assertEquals(Decision.REJECTED, promo.decision());
        assertEquals(
                List.of(Violations.reserved("all", "1d", 3, 2, 1)),
                promo.violations(),
                "max 3, one place reserved: two counted leave none for priority 69");
        assertEquals(DAY_1_MIDNIGHT + HOUR + DAY, promo.retryAfter());
        RuleStep.Result alert = u.sendWithPriority("m4", DAY_1_EVENING, 70);
        assertEquals(Decision.ALLOWED, alert.decision(), "priority 70 takes the third place");
        RuleStep.Result fourth = u.sendWithPriority("m5", DAY_1_EVENING + 1, 100);
        assertEquals(List.of(Violations.rolling("all", "1d", 3, 3)), fourth.violations());
    }

    /** "At most two different campaigns a calendar week" (contract.md §3 {@code campaigns}). */
    static final LimitConfig TWO_CAMPAIGNS_A_WEEK =
            config(
                    "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\","
                            + "\"max\":10}],\"campaigns\":[{\"calendar\":\"week\",\"max\":2}]}]}");

    @Test
    void aThirdCampaignInAWeekWaitsForTheNextWeekAndAKnownOneAddsNone() {
        UserHistoryBuilder u = new UserHistoryBuilder(TWO_CAMPAIGNS_A_WEEK);
        // 2025-11-24 is a Monday (UTC).
        long monday = java.time.Instant.parse("2025-11-24T09:00:00Z").toEpochMilli();
        assertEquals(Decision.ALLOWED, u.send(campaignMessage("a", monday, "c1")).decision());
        assertEquals(Decision.ALLOWED, u.send(campaignMessage("b", monday + DAY, "c2")).decision());
        RuleStep.Result third = u.send(campaignMessage("c", monday + 2 * DAY, "c3"));
        assertEquals(Decision.REJECTED, third.decision());
        assertEquals(List.of(Violations.calendar("campaigns", "week", 2, 2)), third.violations());
        assertEquals(monday - 9 * HOUR + 7 * DAY, third.retryAfter(), "next Monday 00:00");
        assertEquals(
                Decision.ALLOWED,
                u.send(campaignMessage("d", monday + 2 * DAY, "c1")).decision(),
                "c1 is counted this week already");
        assertEquals(
                Decision.ALLOWED,
                u.send(new OutboundMessage("e", 42, "push", "marketing", monday + 3 * DAY))
                        .decision(),
                "a message without a campaign is not subject to it");
    }

    static OutboundMessage campaignMessage(String id, long t, String campaign) {
        return new OutboundMessage(id, 42, "push", "marketing", t, null, campaign, 0);
    }

    @Test
    void allowsFirstMessage() {
        assertEquals(Decision.ALLOWED, user.send("m1", "push", DAY_1_NOON).decision());
    }

    @Test
    void rejectsThirdMessageWithinOneDay() {
        user.send("m1", "push", DAY_1_MIDNIGHT + HOUR);
        user.send("m2", "push", DAY_1_NOON);
        RuleStep.Result v = user.send("m3", "push", DAY_1_EVENING);

        assertEquals(Decision.REJECTED, v.decision());
        assertEquals(List.of(Violations.rolling("all", "1d", 2, 2)), v.violations());
        // The first message leaves every interval containing the retry time one day after it.
        assertEquals(DAY_1_MIDNIGHT + HOUR + DAY, v.retryAfter());
    }

    @Test
    void allowsAgainOnceTheDayHasSlid() {
        user.send("m1", "push", DAY_1_MIDNIGHT + HOUR);
        user.send("m2", "push", DAY_1_NOON);
        assertEquals(
                Decision.ALLOWED, user.send("m3", "push", DAY_1_MIDNIGHT + HOUR + DAY).decision());
    }

    @Test
    void rejectsWhenWeeklyCapIsHitWithDailyRoom() {
        for (int d = 0; d < 5; d++) {
            assertEquals(
                    Decision.ALLOWED, user.send("m" + d, "push", DAY_1_NOON + d * DAY).decision());
        }
        RuleStep.Result v = user.send("m5", "push", DAY_1_NOON + 5 * DAY);

        assertEquals(Decision.REJECTED, v.decision());
        assertEquals(List.of(Violations.rolling("all", "7d", 5, 5)), v.violations());
        assertEquals(DAY_1_NOON + 7 * DAY, v.retryAfter());
    }

    @Test
    void rejectsByChannelCapWithRoomOverall() {
        user.send("m1", "email", DAY_1_NOON);
        RuleStep.Result email = user.send("m2", "email", DAY_1_EVENING);
        RuleStep.Result push = user.send("m3", "push", DAY_1_EVENING);

        assertEquals(Decision.REJECTED, email.decision());
        assertEquals(List.of(Violations.rolling("channel:email", "1d", 1, 1)), email.violations());
        assertEquals(DAY_2_NOON, email.retryAfter());
        assertEquals(Decision.ALLOWED, push.decision());
    }

    @Test
    void exemptMessagesPassAndAreNotCounted() {
        for (int i = 0; i < 5; i++) {
            assertEquals(
                    Decision.EXEMPT,
                    user.send("t" + i, "push", "transactional", DAY_1_NOON).decision());
        }
        assertEquals(Decision.ALLOWED, user.send("m1", "push", DAY_1_NOON).decision());
        assertEquals(Decision.ALLOWED, user.send("m2", "push", DAY_1_NOON).decision());
        assertEquals(1 + 1, user.history().size());
    }

    @Test
    void sameMessageIdIsDuplicateEvenAtAnotherTime() {
        user.send("m1", "push", DAY_1_NOON);
        RuleStep.Result v = user.send("m1", "email", DAY_2_NOON);
        assertEquals(Decision.DUPLICATE, v.decision());
        assertEquals(1, user.history().size());
    }

    @Test
    void duplicateWinsOverStale() {
        user.send("m1", "push", DAY_1_NOON);
        user.send("m2", "push", DAY_1_NOON + 9 * DAY);
        assertEquals(Decision.DUPLICATE, user.send("m1", "push", DAY_1_NOON).decision());
    }

    @Test
    void messageOlderThanLatestMinusLongestWindowIsStale() {
        user.send("m1", "push", DAY_1_NOON + 8 * DAY);
        assertEquals(Decision.STALE, user.send("m2", "push", DAY_1_NOON).decision());
        // Exactly the longest window back is still decided.
        assertEquals(Decision.ALLOWED, user.send("m3", "push", DAY_1_NOON + DAY).decision());
    }

    @Test
    void rejectsOutOfOrderMessageThatWouldOverfillAnEarlierWindow() {
        // Two messages 20 hours apart; a late one between them fits the trailing day of neither
        // alone, but [m1, m1 + 1d) would then hold three.
        user.send("m1", "push", DAY_1_MIDNIGHT);
        user.send("m2", "push", DAY_1_EVENING);
        RuleStep.Result late = user.send("m3", "push", DAY_1_NOON);

        assertEquals(Decision.REJECTED, late.decision());
        assertEquals(List.of(Violations.rolling("all", "1d", 2, 2)), late.violations());
        // Retrying needs a time whose every day-long interval misses one of the two.
        assertEquals(DAY_1_MIDNIGHT + DAY, late.retryAfter());
    }

    @Test
    void outOfOrderMessageIsAllowedWhenNoIntervalOverfills() {
        user.send("m1", "push", DAY_1_MIDNIGHT);
        user.send("m2", "push", DAY_2_NOON);
        assertEquals(Decision.ALLOWED, user.send("m3", "push", DAY_1_EVENING).decision());
    }

    @Test
    void limitOfZeroBlocksAndHasNoRetryTime() {
        UserHistoryBuilder blocked =
                new UserHistoryBuilder(
                        config(
                                "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                                        + "[{\"window\":\"1d\",\"max\":0}]}]}"));
        RuleStep.Result v = blocked.send("m1", "push", DAY_1_NOON);

        assertEquals(Decision.REJECTED, v.decision());
        assertEquals(List.of(Violations.rolling("all", "1d", 0, 0)), v.violations());
        assertNull(v.retryAfter());
    }

    @Test
    void reportsEveryBrokenLimit() {
        UserHistoryBuilder strict =
                new UserHistoryBuilder(
                        config(
                                "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                                        + "[{\"window\":\"1d\",\"max\":1},{\"window\":\"7d\",\"max\":1}],"
                                        + "\"channels\":{\"push\":[{\"window\":\"1h\",\"max\":1}]}}]}"));
        strict.send("m1", "push", DAY_1_NOON);
        RuleStep.Result v = strict.send("m2", "push", DAY_1_NOON + 1);

        assertEquals(
                List.of(
                        Violations.rolling("all", "1d", 1, 1),
                        Violations.rolling("all", "7d", 1, 1),
                        Violations.rolling("channel:push", "1h", 1, 1)),
                v.violations());
        assertEquals(DAY_1_NOON + 7 * DAY, v.retryAfter());
    }

    @Test
    void historyKeepsOnlyTwiceTheLongestWindow() {
        UserHistoryBuilder daily =
                new UserHistoryBuilder(
                        config(
                                "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                                        + "[{\"window\":\"7d\",\"max\":7}]}]}"));
        for (int d = 0; d < 30; d++) {
            assertEquals(
                    Decision.ALLOWED, daily.send("m" + d, "push", DAY_1_NOON + d * DAY).decision());
        }
        UserHistory h = daily.history();
        assertEquals(DAY_1_NOON + 29 * DAY, h.latest());
        for (int i = 0; i < h.size(); i++) {
            assertTrue(h.timestamp(i) > h.latest() - 14 * DAY, "entry " + i + " within 2W");
        }
        assertEquals(14, h.size());
    }

    @Test
    void anEntryExactlyOneWindowLaterIsOutsideTheInterval() {
        // [s, s + w) is half-open: entries at t and t + 1d never share a day-long interval
        UserHistoryBuilder one =
                new UserHistoryBuilder(
                        config(
                                "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                                        + "[{\"window\":\"1d\",\"max\":1}]}]}"));
        assertEquals(Decision.ALLOWED, one.send("m1", "push", DAY_1_NOON).decision());
        assertEquals(Decision.ALLOWED, one.send("m2", "push", DAY_2_NOON).decision());
        RuleStep.Result between = one.send("m3", "push", DAY_1_NOON + 1);
        assertEquals(Decision.REJECTED, between.decision());
        assertEquals(List.of(Violations.rolling("all", "1d", 1, 1)), between.violations());
    }

    @Test
    void anExemptMessageIsExemptEvenWithACountedMessageId() {
        user.send("m1", "push", DAY_1_NOON);
        // EXEMPT is checked before DUPLICATE, and is never counted
        assertEquals(
                Decision.EXEMPT,
                user.send("m1", "push", "transactional", DAY_1_NOON + 1).decision());
        assertEquals(1, user.history().size());
        assertEquals(Decision.DUPLICATE, user.send("m1", "push", DAY_1_NOON + 2).decision());
    }

    @Test
    void theLongestWindowMayComeFromAChannelLimit() {
        // the longest window is the email limit's 30d, so a message 10 days behind is decided,
        // not STALE, and the 30d email limit sees the email sent 25 days earlier
        LimitConfig cfg =
                config(
                        "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                                + "[{\"window\":\"1d\",\"max\":5}],"
                                + "\"channels\":{\"email\":[{\"window\":\"30d\",\"max\":1}]}}]}");
        assertEquals(30 * DAY, cfg.longestWindowMillis());
        UserHistoryBuilder u = new UserHistoryBuilder(cfg);
        u.send("m1", "email", DAY_1_NOON);
        u.send("m2", "push", DAY_1_NOON + 25 * DAY);
        assertEquals(Decision.ALLOWED, u.send("m3", "push", DAY_1_NOON + 15 * DAY).decision());
        RuleStep.Result email = u.send("m4", "email", DAY_1_NOON + 25 * DAY);
        assertEquals(Decision.REJECTED, email.decision());
        assertEquals(List.of(Violations.rolling("channel:email", "30d", 1, 1)), email.violations());
    }

    @Test
    void aConfigThatLengthensTheLongestWindowSeesTheHistoryKeptBefore() {
        // under 1d (history kept back 2d) then 7d: the 7d limit counts what 2d kept, no more
        LimitConfig daily =
                config(
                        "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                                + "[{\"window\":\"1d\",\"max\":1}]}]}");
        LimitConfig weekly =
                config(
                        "{\"version\":2,\"rules\":[{\"segment\":\"*\",\"limits\":"
                                + "[{\"window\":\"7d\",\"max\":2}]}]}");
        UserHistory h = UserHistory.EMPTY;
        for (int d = 0; d < 5; d++) {
            RuleStep.Result v =
                    RuleStep.decide(
                            h,
                            new OutboundMessage(
                                    "d" + d, 42, "push", "marketing", DAY_1_NOON + d * DAY),
                            daily,
                            LimitConfig.DEFAULT_SEGMENT);
            assertEquals(Decision.ALLOWED, v.decision());
            h = v.history();
        }
        // days 0..4 were counted; 2d back from day 4 keeps days 3 and 4 (day 2 is at exactly 2d)
        RuleStep.Result next =
                RuleStep.decide(
                        h,
                        new OutboundMessage("w", 42, "push", "marketing", DAY_1_NOON + 5 * DAY),
                        weekly,
                        LimitConfig.DEFAULT_SEGMENT);
        assertEquals(Decision.REJECTED, next.decision());
        assertEquals(2, ((Violation.Exceeded) next.violations().get(0)).count());
        // a message 4 days behind the latest: STALE under 1d, decided under 7d
        OutboundMessage late = new OutboundMessage("late", 42, "push", "marketing", DAY_1_NOON);
        assertEquals(
                Decision.STALE,
                RuleStep.decide(h, late, daily, LimitConfig.DEFAULT_SEGMENT).decision());
        RuleStep.Result decided = RuleStep.decide(h, late, weekly, LimitConfig.DEFAULT_SEGMENT);
        assertEquals(Decision.REJECTED, decided.decision());
        assertEquals(
                2,
                ((Violation.Exceeded) decided.violations().get(0)).count(),
                "days 3 and 4, as kept");
    }

    @Test
    void timestampsNearTheTopOfTheRangeDoNotOverflow() {
        long nearMax = Long.MAX_VALUE - HOUR;
        user.send("m1", "push", nearMax);
        user.send("m2", "push", nearMax + 1);
        RuleStep.Result v = user.send("m3", "push", nearMax + 2);
        assertEquals(Decision.REJECTED, v.decision());
        assertNull(v.retryAfter()); // no representable time passes
    }

    /** One user's history, fed message by message as the operator would. */
    static final class UserHistoryBuilder {
        private final LimitConfig config;
        private UserHistory history = UserHistory.EMPTY;

        UserHistoryBuilder(LimitConfig config) {
            this.config = config;
        }

        RuleStep.Result send(String id, String channel, long t) {
            return send(id, channel, OutboundMessage.DEFAULT_CATEGORY, t);
        }

        RuleStep.Result send(String id, String channel, String category, long t) {
            return send(new OutboundMessage(id, 42, channel, category, t));
        }

        /** A push of this priority, of the default category. */
        RuleStep.Result sendWithPriority(String id, long t, int priority) {
            return send(
                    new OutboundMessage(
                            id,
                            42,
                            "push",
                            OutboundMessage.DEFAULT_CATEGORY,
                            t,
                            null,
                            null,
                            priority));
        }

        RuleStep.Result send(OutboundMessage m) {
            RuleStep.Result v = RuleStep.decide(history, m, config, LimitConfig.DEFAULT_SEGMENT);
            history = v.history();
            return v;
        }

        UserHistory history() {
            return history;
        }
    }
}
