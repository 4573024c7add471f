package io.freqcap.schema.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.SharedFiles;
import io.freqcap.schema.common.MalformedRecordException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class LimitConfigTest {
    static final String STAR = "{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":1}]}";

    static String withRules(String... rules) {
        return "{\"version\":3,\"rules\":[" + String.join(",", rules) + "]}";
    }

    @Test
    void readsTheContractExample() throws Exception {
        LimitConfig c = LimitConfig.parse(SharedFiles.read("contract/examples/limit-config.json"));
        assertEquals(7, c.version());
        assertEquals(List.of("new", "active", "*"), List.copyOf(c.rules().keySet()));
        assertEquals(
                List.of(Limit.rolling("1d", 86_400_000L, 1)),
                c.ruleFor("active").channelLimits("email"));
        assertEquals(c.rules().get("*"), c.ruleFor("dormant"));
        assertTrue(c.isExempt("transactional"));
        assertEquals(7 * 86_400_000L, c.longestWindowMillis());
    }

    @Test
    void windowsInEveryUnit() throws Exception {
        assertEquals(30_000L, Limit.parseWindow("30s"));
        assertEquals(900_000L, Limit.parseWindow("15m"));
        assertEquals(6 * 3_600_000L, Limit.parseWindow("6h"));
        assertEquals(2 * 7 * 86_400_000L, Limit.parseWindow("2w"));
        assertEquals(Limit.MAX_WINDOW_MILLIS, Limit.parseWindow("90d"));
        assertEquals(Limit.MAX_WINDOW_MILLIS, Limit.parseWindow("2160h"));
    }

    @Test
    void exemptAndChannelsAreOptionalAndUnknownFieldsIgnored() throws Exception {
        LimitConfig c =
                LimitConfig.parse(
                        "{\"version\":1,\"owner\":\"crm\",\"rules\":[{\"segment\":\"*\",\"note\":1,"
                                + "\"limits\":[{\"window\":\"1d\",\"max\":0,\"x\":true}]}]}");
        assertTrue(c.exempt().isEmpty());
        assertEquals(0, c.ruleFor("*").caps().all().get(0).max());
    }

    @Test
    void maxOfOneMillionIsTheLargestAllowed() throws Exception {
        LimitConfig c =
                LimitConfig.parse(
                        "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                                + "[{\"window\":\"90d\",\"max\":1000000}]}]}");
        assertEquals(1_000_000, c.ruleFor("*").caps().all().get(0).max());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "version missing     | {\"rules\":["
                        + STAR
                        + "]} | version: required field is missing",
                "version zero        | {\"version\":0,\"rules\":["
                        + STAR
                        + "]} | version: expected a positive integer",
                "version float       | {\"version\":1.5,\"rules\":["
                        + STAR
                        + "]} | version: expected a positive integer",
                "version text        | {\"version\":\"2\",\"rules\":["
                        + STAR
                        + "]} | version: expected a positive integer",
                "rules missing       | {\"version\":1} | rules: expected a non-empty array",
                "rules empty         | {\"version\":1,\"rules\":[]} | rules: expected a non-empty array",
                "no star rule        | {\"version\":1,\"rules\":[{\"segment\":\"new\",\"limits\":[{\"window\":\"1d\",\"max\":1}]}]} | rules: exactly one rule must have segment \"*\"",
                "two star rules      | {\"version\":1,\"rules\":["
                        + STAR
                        + ","
                        + STAR
                        + "]} | rules[1].segment: \"*\" has two rules",
                "segment missing     | {\"version\":1,\"rules\":[{\"limits\":[{\"window\":\"1d\",\"max\":1}]}]} | rules[0].segment: expected a non-empty string",
                "limits empty        | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[]}]} | rules[0].limits: expected a non-empty array",
                "limits missing      | {\"version\":1,\"rules\":[{\"segment\":\"*\"}]} | rules[0].limits: expected a non-empty array",
                "window no unit      | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"10\",\"max\":1}]}]} | rules[0].limits[0].window: expected a positive integer followed by s, m, h, d or w",
                "window bad unit     | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1y\",\"max\":1}]}]} | rules[0].limits[0].window: expected a positive integer",
                "window zero         | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"0d\",\"max\":1}]}]} | rules[0].limits[0].window: must be positive",
                "window over 90d     | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"91d\",\"max\":1}]}]} | rules[0].limits[0].window: at most 90d",
                "window 13 weeks     | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"13w\",\"max\":1}]}]} | rules[0].limits[0].window: at most 90d",
                "window huge         | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"99999999999999999999s\",\"max\":1}]}]} | rules[0].limits[0].window: at most 90d",
                "window number       | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":86400,\"max\":1}]}]} | rules[0].limits[0].window: expected a string",
                "max negative        | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":-1}]}]} | rules[0].limits[0].max: expected an integer 0..1000000",
                "max too large       | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":1000001}]}]} | rules[0].limits[0].max: expected an integer 0..1000000",
                "max missing         | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\"}]}]} | rules[0].limits[0].max: expected an integer 0..1000000",
                "reserve too many    | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":3,\"reserve\":{\"slots\":4,\"priority\":50}}]}]} | rules[0].limits[0].reserve.slots: expected an integer 1..3, got 4",
                "reserve no slots    | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":3,\"reserve\":{\"priority\":50}}]}]} | rules[0].limits[0].reserve.slots: expected an integer 1..3, got null",
                "reserve priority 0  | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"calendar\":\"day\",\"max\":3,\"reserve\":{\"slots\":1,\"priority\":0}}]}]} | rules[0].limits[0].reserve.priority: expected an integer 1..100, got 0",
                "reserve not object  | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":3,\"reserve\":1}]}]} | rules[0].limits[0].reserve: expected an object",
                "bad channel name    | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":1}],\"channels\":{\"E-mail\":[]}}]} | rules[0].channels: channel \"E-mail\" does not match",
                "bad channel limit   | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":1}],\"channels\":{\"email\":[{\"window\":\"1d\",\"max\":2000000}]}}]} | rules[0].channels.email[0].max",
                "exempt not array    | {\"version\":1,\"rules\":["
                        + STAR
                        + "],\"exempt\":\"transactional\"} | exempt: expected an array of strings",
                "exempt numbers      | {\"version\":1,\"rules\":["
                        + STAR
                        + "],\"exempt\":[1]} | exempt: expected an array of strings",
                "unknown zone        | {\"version\":1,\"timezone\":\"Mars/Olympus\",\"rules\":["
                        + STAR
                        + "]} | timezone: not a time-zone id this job knows, got \"Mars/Olympus\"",
                "zone as number      | {\"version\":1,\"timezone\":8,\"rules\":["
                        + STAR
                        + "]} | timezone: not a time-zone id this job knows, got 8",
                "shadow without star | {\"version\":1,\"rules\":["
                        + STAR
                        + "],\"shadow\":{\"rules\":[{\"segment\":\"new\",\"limits\":[{\"window\":\"1d\",\"max\":1}]}]}} | shadow.rules: exactly one rule must have segment \"*\"",
                "shadow bad limit    | {\"version\":1,\"rules\":["
                        + STAR
                        + "],\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"91d\",\"max\":1}]}]}} | shadow.rules[0].limits[0].window: at most 90d",
                "shadow no rules     | {\"version\":1,\"rules\":["
                        + STAR
                        + "],\"shadow\":{}} | shadow.rules: expected a non-empty array",
                "window and calendar | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"calendar\":\"day\",\"max\":1}]}]} | rules[0].limits[0]: exactly one of window and calendar",
                "calendar unknown    | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"calendar\":\"year\",\"max\":1}]}]} | rules[0].limits[0].calendar: expected day, week or month, got \"year\"",
                "calendar number     | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"calendar\":1,\"max\":1}]}]} | rules[0].limits[0].calendar: expected day, week or month, got 1",
                "neither window nor calendar | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"max\":1}]}]} | rules[0].limits[0]: exactly one of window and calendar",
                "bad category name   | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":1}],\"categories\":{\"Promo\":[]}}]} | rules[0].categories: category \"Promo\" does not match",
                "bad campaign limit  | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":1}],\"campaign\":[{\"window\":\"100d\",\"max\":1}]}]} | rules[0].campaign[0].window: at most 90d",
                "campaign not array  | {\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":1}],\"campaign\":{}}]} | rules[0].campaign: expected an array",
                "not json            | {version: 1} | not valid JSON",
                "trailing bytes      | {\"version\":1,\"rules\":["
                        + STAR
                        + "]} {} | not valid JSON",
                "not an object       | [] | expected a JSON object",
            })
    void rejectsConfigsThatBreakARule(String name, String json, String error) {
        MalformedRecordException e =
                assertThrows(MalformedRecordException.class, () -> LimitConfig.parse(json));
        assertTrue(e.getMessage().startsWith(error), name + ": " + e.getMessage());
    }

    static String limits(int n) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < n; i++) {
            b.append(i == 0 ? "" : ",")
                    .append("{\"window\":\"")
                    .append(61 + i)
                    .append("m\",\"max\":1}");
        }
        return b.append(']').toString();
    }

    static String named(int n, String limits) {
        StringBuilder b = new StringBuilder("{");
        for (int i = 0; i < n; i++) {
            b.append(i == 0 ? "" : ",").append("\"c").append(i).append("\":").append(limits);
        }
        return b.append('}').toString();
    }

    static String rules(int n, String prefix) {
        StringBuilder b = new StringBuilder("[" + STAR);
        for (int i = 1; i < n; i++) {
            b.append(",{\"segment\":\"")
                    .append(prefix)
                    .append(i)
                    .append("\",\"limits\":")
                    .append(limits(1))
                    .append('}');
        }
        return b.append(']').toString();
    }

    static String star(String extra) {
        return "{\"version\":2,\"rules\":[{\"segment\":\"*\",\"limits\":" + extra + "]}";
    }

    @Test
    void sizeBoundsAreInclusiveAndEachBreachNamesItsField() throws Exception {
        // At the bounds: accepted.
        LimitConfig.parse(
                star(
                        limits(16)
                                + ",\"channels\":"
                                + named(64, limits(16))
                                + ",\"categories\":"
                                + named(64, limits(16))
                                + ",\"campaign\":"
                                + limits(16)
                                + "}"));
        LimitConfig.parse(
                "{\"version\":2,\"rules\":"
                        + rules(1000, "s")
                        + ",\"shadow\":{\"rules\":"
                        + rules(1000, "t")
                        + "}}");
        LimitConfig.parse(
                "{\"version\":2,\"rules\":["
                        + STAR
                        + ",{\"segment\":\""
                        + "s".repeat(64)
                        + "\",\"limits\":"
                        + limits(1)
                        + "}]}");
        // One past each: INVALID_CONTROL naming the field.
        java.util.Map<String, String> breaches = new java.util.LinkedHashMap<>();
        breaches.put(star(limits(17) + "}"), "rules[0].limits: at most 16 limits, got 17");
        breaches.put(star(limits(25_000) + "}"), "rules[0].limits: at most 16 limits, got 25000");
        breaches.put(
                star(limits(1) + ",\"channels\":{\"push\":" + limits(17) + "}}"),
                "rules[0].channels.push: at most 16 limits, got 17");
        breaches.put(
                star(limits(1) + ",\"channels\":" + named(65, limits(1)) + "}"),
                "rules[0].channels: at most 64 entries, got 65");
        breaches.put(
                star(limits(1) + ",\"categories\":" + named(65, limits(1)) + "}"),
                "rules[0].categories: at most 64 entries, got 65");
        breaches.put(
                star(limits(1) + ",\"campaign\":" + limits(17) + "}"),
                "rules[0].campaign: at most 16 limits, got 17");
        breaches.put(
                "{\"version\":2,\"rules\":" + rules(1001, "s") + "}",
                "rules: at most 1000 rules, got 1001");
        breaches.put(
                "{\"version\":2,\"rules\":["
                        + STAR
                        + "],\"shadow\":{\"rules\":"
                        + rules(1001, "t")
                        + "}}",
                "shadow.rules: at most 1000 rules, got 1001");
        breaches.put(
                "{\"version\":2,\"rules\":["
                        + STAR
                        + ",{\"segment\":\""
                        + "s".repeat(65)
                        + "\",\"limits\":"
                        + limits(1)
                        + "}]}",
                "rules[1].segment: must be 1..64 characters, got 65");
        for (var e : breaches.entrySet()) {
            MalformedRecordException thrown =
                    assertThrows(
                            MalformedRecordException.class, () -> LimitConfig.parse(e.getKey()));
            assertEquals(e.getValue(), thrown.getMessage());
        }
    }

    @Test
    void readsTheCalendarExample() throws Exception {
        LimitConfig c =
                LimitConfig.parse(SharedFiles.read("contract/examples/limit-config-calendar.json"));
        assertEquals("Asia/Singapore", c.timezone());
        Limit day = c.ruleFor("*").caps().all().get(0);
        assertEquals("day", day.calendar());
        assertEquals(null, day.window());
        assertEquals(1, day.max());
        assertEquals("week", c.ruleFor("new").categoryLimits("promo").get(0).calendar());
        assertEquals(33 * 86_400_000L, c.longestWindowMillis(), "a month counts as 33 days");
    }

    @Test
    void categoryAndCampaignLimitsAreRead() throws Exception {
        String fields =
                "\"limits\":[{\"window\":\"1d\",\"max\":3}],"
                        + "\"categories\":{\"promo\":[{\"window\":\"7d\",\"max\":2}]},"
                        + "\"campaign\":[{\"window\":\"30d\",\"max\":1}]";
        LimitConfig c = LimitConfig.parse(starRule(fields, ""));
        Rule r = c.ruleFor("*");
        assertEquals(2, r.categoryLimits("promo").get(0).max());
        assertEquals(List.of(), r.categoryLimits("news"));
        assertEquals(1, r.caps().campaign().get(0).max());
        assertEquals(30 * 86_400_000L, c.longestWindowMillis(), "the campaign's window is longest");
    }

    @Test
    void aKnownZoneAndAValidShadowAreAccepted() throws Exception {
        LimitConfig c =
                LimitConfig.parse(
                        "{\"version\":3,\"timezone\":\"Australia/Lord_Howe\",\"rules\":["
                                + STAR
                                + "],\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":"
                                + "[{\"window\":\"1d\",\"max\":5}]}]}}");
        assertEquals(3, c.version());
        assertEquals(1, c.ruleFor("*").caps().all().get(0).max(), "the shadow is not enforced");
    }

    @Test
    void duplicateSegmentsAreRejected() {
        String rule = "{\"segment\":\"new\",\"limits\":[{\"window\":\"1d\",\"max\":1}]}";
        MalformedRecordException e =
                assertThrows(
                        MalformedRecordException.class,
                        () -> LimitConfig.parse(withRules(rule, STAR, rule)));
        assertEquals("rules[2].segment: \"new\" has two rules", e.getMessage());
    }

    @Test
    void commandsAreToldApartFromConfigs() throws Exception {
        assertEquals(
                new ConfigRecord.Command("rebuild-mirror"),
                ConfigTopic.parse("{\"command\":\"rebuild-mirror\"}".getBytes()));
        assertTrue(ConfigTopic.parse(withRules(STAR).getBytes()) instanceof LimitConfig);
        assertThrows(
                MalformedRecordException.class,
                () -> LimitConfig.parse("{\"command\":\"rebuild-mirror\"}"));
    }

    @Test
    void cancelHeldCampaignIdsAreMeasuredInCodePointsAsMessagesAre() throws Exception {
        String longest = "\uD83D\uDE00".repeat(128); // 128 code points, 256 chars
        assertEquals(
                new ConfigRecord.CancelHeld(longest, null),
                ConfigTopic.parse(
                        ("{\"command\":\"cancel-held\",\"campaignId\":\"" + longest + "\"}")
                                .getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        assertThrows(
                MalformedRecordException.class,
                () ->
                        ConfigTopic.parse(
                                ("{\"command\":\"cancel-held\",\"campaignId\":\""
                                                + longest
                                                + "x\"}")
                                        .getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    /** contract.md §7 (v5): by campaign, by user, by user and message; null is not given. */
    @Test
    void cancelHeldTakesACampaignAUserOrOneMessageOfAUser() throws Exception {
        String longest = "\uD83D\uDE00".repeat(128);
        assertEquals(
                new ConfigRecord.CancelHeld(null, 42L, null),
                command("{\"command\":\"cancel-held\",\"userId\":42,\"campaignId\":null}"));
        assertEquals(
                new ConfigRecord.CancelHeld(null, Long.MAX_VALUE, longest),
                command(
                        "{\"command\":\"cancel-held\",\"userId\":9223372036854775807,"
                                + "\"messageId\":\""
                                + longest
                                + "\"}"));
        assertEquals(
                new ConfigRecord.CancelHeld("c", 0L, "m-1"),
                command(
                        "{\"command\":\"cancel-held\",\"campaignId\":\"c\",\"userId\":0,"
                                + "\"messageId\":\"m-1\"}"));
        for (String bad :
                List.of(
                        "{\"command\":\"cancel-held\"}",
                        "{\"command\":\"cancel-held\",\"userId\":null}",
                        "{\"command\":\"cancel-held\",\"campaignId\":\"c\",\"messageId\":\"m\"}",
                        "{\"command\":\"cancel-held\",\"userId\":1,\"messageId\":\"\"}",
                        "{\"command\":\"cancel-held\",\"userId\":1,\"messageId\":7}",
                        "{\"command\":\"cancel-held\",\"userId\":1,\"messageId\":\"\\ud800\"}",
                        "{\"command\":\"cancel-held\",\"userId\":1,\"messageId\":\""
                                + longest
                                + "x\"}",
                        "{\"command\":\"cancel-held\",\"userId\":9223372036854775808}",
                        "{\"command\":\"cancel-held\",\"userId\":-1}")) {
            assertThrows(MalformedRecordException.class, () -> command(bad), bad);
        }
        ConfigRecord.CancelHeld one = new ConfigRecord.CancelHeld(null, 42L, "m-1");
        assertTrue(one.takes(42, "any", "m-1"));
        assertTrue(!one.takes(42, "any", "m-2") && !one.takes(43, null, "m-1"));
        ConfigRecord.CancelHeld campaign = new ConfigRecord.CancelHeld("c", null);
        assertTrue(campaign.takes(7, "c", "x") && !campaign.takes(7, null, "x"));
    }

    private static ConfigRecord command(String json) throws MalformedRecordException {
        return ConfigTopic.parse(json.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    @Test
    void readsReservedPlacesOfTheContractsPriorityExample() throws Exception {
        LimitConfig c =
                LimitConfig.parse(SharedFiles.read("contract/examples/limit-config-priority.json"));
        Limit day = c.ruleFor("vip").caps().all().get(0);
        assertEquals(new Limit.Reserve(1, 70), day.reserve());
        assertEquals(2, day.forPriority(69).max(), "the third place is kept from priority 69");
        assertEquals(1, day.forPriority(69).reserved());
        assertEquals(day, day.forPriority(70), "priority 70 uses all three");
        assertEquals(null, c.ruleFor("vip").caps().all().get(1).reserve());
        assertEquals(
                List.of(Limit.rolling("7d", 7 * 86_400_000L, 4)),
                c.ruleFor("vip").caps().campaigns());
        assertEquals(
                List.of(Limit.rolling("7d", 7 * 86_400_000L, 2)),
                c.ruleFor("*").caps().campaigns());
        assertEquals(List.of(), c.ruleFor("*").caps().campaign(), "campaigns is not campaign");
        assertEquals(20, c.maxHeld());
    }

    @Test
    void readsTheHoldExample() throws Exception {
        LimitConfig c =
                LimitConfig.parse(SharedFiles.read("contract/examples/limit-config-hold.json"));
        Rule vip = c.ruleFor("vip");
        assertEquals("12h", vip.deferral().hold());
        assertEquals(12 * 3_600_000L, vip.deferral().holdMillis());
        assertEquals("22:00", vip.deferral().quietHours().from());
        assertEquals(7 * 60 + 30, vip.deferral().quietHours().toMinute());
        assertTrue(vip.quietHoursFor("push") != null);
        assertEquals(null, vip.quietHoursFor("email"), "email is not in vip's quiet channels");
        Rule star = c.ruleFor("*");
        assertEquals(86_400_000L, star.deferral().holdMillis());
        assertTrue(star.quietHoursFor("email") != null, "no channels: every channel");
    }

    @Test
    void quietHoursSpanningMidnightAndNot() throws Exception {
        QuietHours night = hours("21:00", "08:00").deferral().quietHours();
        QuietHours lunch = hours("12:00", "13:30").deferral().quietHours();
        long minute = 60_000L;
        assertTrue(night.isQuiet(21 * 60 * minute));
        assertTrue(night.isQuiet(3 * 60 * minute));
        assertTrue(!night.isQuiet(8 * 60 * minute), "to is the first time that is not quiet");
        assertTrue(!night.isQuiet(20 * 60 * minute + 59 * minute));
        assertTrue(lunch.isQuiet(13 * 60 * minute + 29 * minute));
        assertTrue(!lunch.isQuiet(13 * 60 * minute + 30 * minute));
        assertTrue(!lunch.isQuiet(11 * 60 * minute));
    }

    /** A config whose only rule, {@code *}, has {@code fields}; {@code more} after the rules. */
    static String starRule(String fields, String more) {
        return "{\"version\":2,\"rules\":[{\"segment\":\"*\"," + fields + "}]" + more + "}";
    }

    static Rule hours(String from, String to) throws Exception {
        return LimitConfig.parse(
                        starRule(
                                "\"limits\":[{\"window\":\"1d\",\"max\":1}],\"quietHours\":{\"from\":\""
                                        + from
                                        + "\",\"to\":\""
                                        + to
                                        + "\"}",
                                ""))
                .ruleFor("*");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "hold over the longest window | \"hold\":\"2d\" | rules[0].hold: 2d is longer than the config's longest window",
                "hold not a duration          | \"hold\":\"soon\" | rules[0].hold: expected a positive integer followed by s, m, h, d or w",
                "hold zero                    | \"hold\":\"0h\" | rules[0].hold: must be positive",
                "hold a number                | \"hold\":3600 | rules[0].hold: expected a string",
                "quiet hours not an object    | \"quietHours\":\"21-8\" | rules[0].quietHours: expected an object",
                "from missing                 | \"quietHours\":{\"to\":\"08:00\"} | rules[0].quietHours.from: expected a local time HH:MM",
                "to not HH:MM                 | \"quietHours\":{\"from\":\"21:00\",\"to\":\"8am\"} | rules[0].quietHours.to: expected a local time HH:MM",
                "hour 24                      | \"quietHours\":{\"from\":\"24:00\",\"to\":\"08:00\"} | rules[0].quietHours.from: expected a local time HH:MM",
                "from equals to               | \"quietHours\":{\"from\":\"08:00\",\"to\":\"08:00\"} | rules[0].quietHours: from and to are the same time",
                "channels empty               | \"quietHours\":{\"from\":\"21:00\",\"to\":\"08:00\",\"channels\":[]} | rules[0].quietHours.channels: expected a non-empty array",
                "channel not a channel name   | \"quietHours\":{\"from\":\"21:00\",\"to\":\"08:00\",\"channels\":[\"Push\"]} | rules[0].quietHours.channels: \"Push\" does not match",
            })
    void holdAndQuietHoursBreachesNameTheirField(String name, String field, String error) {
        String json = starRule("\"limits\":[{\"window\":\"1d\",\"max\":1}]," + field, "");
        MalformedRecordException e =
                assertThrows(MalformedRecordException.class, () -> LimitConfig.parse(json));
        assertTrue(e.getMessage().startsWith(error), e.getMessage());
    }

    @Test
    void holdMayReachACalendarLimitsSpanAndShadowRulesHoldToo() throws Exception {
        // A calendar day counts as 3d (contract.md §6): a hold of 3d is the most it allows.
        LimitConfig c =
                LimitConfig.parse(
                        starRule(
                                "\"limits\":[{\"calendar\":\"day\",\"max\":1}],\"hold\":\"3d\"",
                                ",\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":"
                                        + "[{\"window\":\"1d\",\"max\":1}],\"hold\":\"1d\","
                                        + "\"quietHours\":{\"from\":\"22:00\",\"to\":\"06:00\"}}]}"));
        assertEquals(3 * 86_400_000L, c.ruleFor("*").deferral().holdMillis());
        assertEquals("22:00", c.shadowRuleFor("*").deferral().quietHours().from());
        MalformedRecordException e =
                assertThrows(
                        MalformedRecordException.class,
                        () ->
                                LimitConfig.parse(
                                        starRule(
                                                "\"limits\":[{\"calendar\":\"day\",\"max\":1}],"
                                                        + "\"hold\":\"4d\"",
                                                "")));
        assertTrue(e.getMessage().startsWith("rules[0].hold: 4d is longer"), e.getMessage());
    }

    /**
     * contract.md §6's table for {@code examples/limit-config-fatigue.json} (after 5, scale 0.5,
     * floor 1): 4, 12, 2 for u = 0..4; 2, 6, 1 for 5..9; 1, 3, 1 for 10..14; 1, 1, 1 from 15.
     */
    @Test
    void readsTheFatigueExampleAndItsStepsAreTheContractsTable() throws Exception {
        LimitConfig c =
                LimitConfig.parse(SharedFiles.read("contract/examples/limit-config-fatigue.json"));
        Fatigue f = c.ruleFor("*").fatigue();
        assertEquals(new Fatigue(5, 50, 1, "30d", 30 * 86_400_000L), f);
        assertEquals(
                new Fatigue(3, 25, 1, "14d", 14 * 86_400_000L), c.shadowRuleFor("*").fatigue());
        assertEquals(30 * 86_400_000L, c.keptWindowMillis(), "histories serve the 30 days");
        assertEquals(7 * 86_400_000L, c.longestWindowMillis(), "STALE is the limits' alone");
        int[][] table = {{4, 12, 2}, {2, 6, 1}, {1, 3, 1}, {1, 1, 1}};
        for (int u = 0; u < 25; u++) {
            int[] want = table[Math.min(u / 5, 3)];
            assertEquals(want[0], f.lowered(4, u), "day, u = " + u);
            assertEquals(want[1], f.lowered(12, u), "week, u = " + u);
            assertEquals(want[2], f.lowered(2, u), "email, u = " + u);
        }
        assertEquals(0, f.lowered(0, 100), "never above the max: min(floor, max)");
        assertEquals(1, f.lowered(1_000_000, Long.MAX_VALUE), "any u: the floor, soon");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "scale 0.01                 | {\"after\":1,\"scale\":0.01,\"floor\":0,\"window\":\"1d\"} | 1",
                "scale 0.99                 | {\"after\":1000,\"scale\":0.99,\"floor\":1000000,\"window\":\"90d\"} | 99",
                "scale as 5e-1              | {\"after\":5,\"scale\":5e-1,\"floor\":1,\"window\":\"30d\"} | 50",
                "scale 0.50                 | {\"after\":5,\"scale\":0.50,\"floor\":1,\"window\":\"30d\"} | 50",
            })
    void fatigueAtItsBoundsIsRead(String name, String fatigue, int hundredths) throws Exception {
        LimitConfig c =
                LimitConfig.parse(
                        starRule(
                                "\"limits\":[{\"window\":\"1d\",\"max\":1}],\"fatigue\":" + fatigue,
                                ""));
        assertEquals(hundredths, c.ruleFor("*").fatigue().scaleHundredths());
        assertTrue(c.fatigues());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "after 0          | {\"after\":0,\"scale\":0.5,\"floor\":1,\"window\":\"30d\"} | rules[0].fatigue.after: expected an integer 1..1000",
                "after 1001       | {\"after\":1001,\"scale\":0.5,\"floor\":1,\"window\":\"30d\"} | rules[0].fatigue.after: expected an integer 1..1000",
                "scale 1          | {\"after\":5,\"scale\":1,\"floor\":1,\"window\":\"30d\"} | rules[0].fatigue.scale: expected a number 0.01..0.99",
                "scale 0          | {\"after\":5,\"scale\":0,\"floor\":1,\"window\":\"30d\"} | rules[0].fatigue.scale: expected a number 0.01..0.99",
                "three decimals   | {\"after\":5,\"scale\":0.125,\"floor\":1,\"window\":\"30d\"} | rules[0].fatigue.scale: expected a number 0.01..0.99 with at most two decimals",
                "scale infinite   | {\"after\":5,\"scale\":1e400,\"floor\":1,\"window\":\"30d\"} | rules[0].fatigue.scale: expected a number",
                "scale a string   | {\"after\":5,\"scale\":\"0.5\",\"floor\":1,\"window\":\"30d\"} | rules[0].fatigue.scale: expected a number",
                "20 decimals      | {\"after\":5,\"scale\":0.99000000000000000001,\"floor\":1,\"window\":\"30d\"} | rules[0].fatigue.scale: expected a number 0.01..0.99 with at most two decimals",
                "just below 0.01  | {\"after\":5,\"scale\":0.009999999999999999999,\"floor\":1,\"window\":\"30d\"} | rules[0].fatigue.scale: expected a number 0.01..0.99",
                "floor -1         | {\"after\":5,\"scale\":0.5,\"floor\":-1,\"window\":\"30d\"} | rules[0].fatigue.floor: expected an integer 0..1000000",
                "floor 1000001    | {\"after\":5,\"scale\":0.5,\"floor\":1000001,\"window\":\"30d\"} | rules[0].fatigue.floor: expected an integer 0..1000000",
                "window 91d       | {\"after\":5,\"scale\":0.5,\"floor\":1,\"window\":\"91d\"} | rules[0].fatigue.window: at most 90d",
                "window missing   | {\"after\":5,\"scale\":0.5,\"floor\":1} | rules[0].fatigue.window: expected a string",
                "not an object    | 5 | rules[0].fatigue: expected an object",
            })
    void fatigueBreachesNameTheirField(String name, String fatigue, String error) {
        String json =
                starRule("\"limits\":[{\"window\":\"1d\",\"max\":1}],\"fatigue\":" + fatigue, "");
        MalformedRecordException e =
                assertThrows(MalformedRecordException.class, () -> LimitConfig.parse(json));
        assertTrue(e.getMessage().startsWith(error), e.getMessage());
    }
}
