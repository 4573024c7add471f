package io.freqcap.schema.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.SharedFiles;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.AuditRecords;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.lifetime.LifetimeCount;
import io.freqcap.schema.message.OutboundMessage;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Lifetime limits and {@code end-campaign} as records carry them (contract.md §3, §5, §7). */
class LifetimeLimitsTest {
    private static final String LIMITS = "\"limits\":[{\"window\":\"1d\",\"max\":5}]";

    private static String config(String campaign) {
        return "{\"version\":2,\"rules\":[{\"segment\":\"*\","
                + LIMITS
                + ",\"campaign\":"
                + campaign
                + "}]}";
    }

    @Test
    void readsTheContractExample() throws Exception {
        LimitConfig c =
                LimitConfig.parse(SharedFiles.read("contract/examples/limit-config-lifetime.json"));
        Limit vip = c.ruleFor("vip").caps().lifetime().get(0);
        assertTrue(vip.lifetime());
        assertEquals(3, vip.max());
        assertEquals(new Limit.Reserve(1, 70), vip.reserve());
        // the campaign list's others stay where the rolling and calendar checks read them
        assertEquals(
                List.of(Limit.rolling("1d", 86_400_000L, 1)), c.ruleFor("vip").caps().campaign());
        assertEquals(List.of(Limit.lifetime(1)), c.ruleFor("*").caps().lifetime());
        assertTrue(c.hasLifetime());
        // not a window: the longest window is the rules' rolling and calendar ones
        assertEquals(7 * 86_400_000L, c.longestWindowMillis());
    }

    @Test
    void aLifetimeLimitHasNoWindowAndMaxAtItsBounds() throws Exception {
        for (int max : new int[] {0, 1, Limit.MAX_MAX}) {
            Limit l =
                    LimitConfig.parse(config("[{\"lifetime\":true,\"max\":" + max + "}]"))
                            .ruleFor("*")
                            .caps()
                            .lifetime()
                            .get(0);
            assertTrue(l.lifetime());
            assertEquals(max, l.max());
            assertNull(l.window());
            assertNull(l.calendar());
            assertEquals(0, l.windowMillis());
            assertFalse(l.isCalendar());
        }
        // null reads as absent, elsewhere too
        assertFalse(
                LimitConfig.parse(config("[{\"window\":\"1d\",\"max\":1,\"lifetime\":null}]"))
                        .ruleFor("*")
                        .caps()
                        .campaign()
                        .get(0)
                        .lifetime());
        LimitConfig.parse(
                "{\"version\":2,\"rules\":[{\"segment\":\"*\",\"limits\":"
                        + "[{\"window\":\"1d\",\"max\":5,\"lifetime\":null}]}]}");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "max past the bound | [{\"lifetime\":true,\"max\":1000001}] | rules[0].campaign[0].max: expected an integer 0..1000000",
                "max missing        | [{\"lifetime\":true}] | rules[0].campaign[0].max: expected an integer 0..1000000",
                "false              | [{\"lifetime\":false,\"max\":1}] | rules[0].campaign[0].lifetime: expected true, got false",
                "a string           | [{\"lifetime\":\"true\",\"max\":1}] | rules[0].campaign[0].lifetime: expected true, got \"true\"",
                "a number           | [{\"lifetime\":1,\"max\":1}] | rules[0].campaign[0].lifetime: expected true, got 1",
                "with a window      | [{\"lifetime\":true,\"window\":\"1d\",\"max\":1}] | rules[0].campaign[0]: exactly one of window, calendar and lifetime",
                "with a calendar    | [{\"lifetime\":true,\"calendar\":\"day\",\"max\":1}] | rules[0].campaign[0]: exactly one of window, calendar and lifetime",
                "none of the three  | [{\"max\":1}] | rules[0].campaign[0]: exactly one of window, calendar and lifetime",
                "reserve past max   | [{\"lifetime\":true,\"max\":1,\"reserve\":{\"slots\":2,\"priority\":50}}] | rules[0].campaign[0].reserve.slots: expected an integer 1..1, got 2",
            })
    void aCampaignListRejectsABrokenLifetimeLimit(String name, String campaign, String error) {
        MalformedRecordException e =
                assertThrows(
                        MalformedRecordException.class, () -> LimitConfig.parse(config(campaign)));
        assertTrue(e.getMessage().startsWith(error), name + ": " + e.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "limits     | \"limits\":[{\"lifetime\":true,\"max\":1}] | rules[0].limits[0].lifetime: only a limit in a rule's campaign list may be one",
                "channel    | "
                        + LIMITS
                        + ",\"channels\":{\"push\":[{\"lifetime\":true,\"max\":1}]} | rules[0].channels.push[0].lifetime: only",
                "category   | "
                        + LIMITS
                        + ",\"categories\":{\"promo\":[{\"lifetime\":true,\"max\":1}]} | rules[0].categories.promo[0].lifetime: only",
                "campaigns  | "
                        + LIMITS
                        + ",\"campaigns\":[{\"lifetime\":true,\"max\":1}] | rules[0].campaigns[0].lifetime: only",
                "beside one | "
                        + LIMITS
                        + ",\"campaigns\":[{\"window\":\"1d\",\"max\":1,\"lifetime\":true}] | rules[0].campaigns[0].lifetime: only",
            })
    void noOtherListTakesOne(String name, String fields, String error) {
        String json = "{\"version\":2,\"rules\":[{\"segment\":\"*\"," + fields + "}]}";
        MalformedRecordException e =
                assertThrows(MalformedRecordException.class, () -> LimitConfig.parse(json));
        assertTrue(e.getMessage().startsWith(error), name + ": " + e.getMessage());
    }

    @Test
    void shadowRulesTakeThemToo() throws Exception {
        LimitConfig c =
                LimitConfig.parse(
                        "{\"version\":2,\"rules\":[{\"segment\":\"*\","
                                + LIMITS
                                + "}],\"shadow\":{\"rules\":[{\"segment\":\"*\","
                                + LIMITS
                                + ",\"campaign\":[{\"lifetime\":true,\"max\":2}]}]}}");
        assertTrue(c.shadowRuleFor("*").caps().lifetime().get(0).lifetime());
        assertTrue(c.hasLifetime());
        assertFalse(LimitConfig.parse(config("[{\"window\":\"1d\",\"max\":1}]")).hasLifetime());
    }

    @Test
    void aBrokenLifetimeLimitIsWrittenAsTheContractSays() throws Exception {
        OutboundMessage m = new OutboundMessage("m1", 42, "push", "marketing", 1763841600000L);
        Limit three = Limit.lifetime(3);
        Limit reserving = three.reserving(new Limit.Reserve(1, 70)).forPriority(0);
        List<Violation> violations =
                List.of(
                        Violation.of("campaign:spring-sale", three, 3),
                        Violation.of("campaign:spring-sale", reserving, 2));
        AuditEvent e =
                AuditRecords.decision(
                        Verdict.rejected("*", violations, null),
                        m,
                        2,
                        "{}".getBytes(StandardCharsets.UTF_8),
                        AuditRecords.DEFAULT_MAX_BYTES);
        var json = Json.MAPPER.readTree(e.json());
        assertEquals(
                Json.MAPPER.readTree(
                        "[{\"scope\":\"campaign:spring-sale\",\"lifetime\":true,\"max\":3,"
                                + "\"count\":3},"
                                + "{\"scope\":\"campaign:spring-sale\",\"lifetime\":true,\"max\":3,"
                                + "\"reserved\":1,\"count\":2}]"),
                json.get("violations"));
        assertTrue(json.get("retryAfter").isNull());
    }

    @Test
    void endCampaignNamesACampaignAsCancelHeldDoes() throws Exception {
        String longest = "c".repeat(OutboundMessage.MAX_CAMPAIGN_ID_CHARS);
        assertEquals(
                new ConfigRecord.EndCampaign(longest),
                command("{\"command\":\"end-campaign\",\"campaignId\":\"" + longest + "\"}"));
        assertEquals(
                new ConfigRecord.EndCampaign("9223372036854775808"),
                command("{\"command\":\"end-campaign\",\"campaignId\":9223372036854775808}"));
        for (String bad :
                new String[] {
                    "{\"command\":\"end-campaign\"}",
                    "{\"command\":\"end-campaign\",\"campaignId\":null}",
                    "{\"command\":\"end-campaign\",\"campaignId\":\"\"}",
                    "{\"command\":\"end-campaign\",\"campaignId\":\"" + longest + "c\"}",
                    "{\"command\":\"end-campaign\",\"campaignId\":[\"a\"]}",
                    "{\"command\":\"end-campaign\",\"campaignId\":1.5}",
                }) {
            MalformedRecordException e =
                    assertThrows(MalformedRecordException.class, () -> command(bad), bad);
            assertTrue(e.getMessage().startsWith("campaignId: end-campaign"), e.getMessage());
        }
    }

    @Test
    void theRetentionIsOneDayTo3650Days() {
        assertEquals(86_400_000L, LifetimeCount.parseRetention("1d"));
        assertEquals(86_400_000L, LifetimeCount.parseRetention("24h"));
        assertEquals(3_650L * 86_400_000L, LifetimeCount.parseRetention("3650d"));
        assertEquals(730L * 86_400_000L, LifetimeCount.DEFAULT_RETENTION_MILLIS);
        for (String bad :
                new String[] {
                    "0d", "86399s", "3651d", "522w", "1y", "", "99999999999999999999d", "-1d"
                }) {
            assertThrows(
                    IllegalArgumentException.class, () -> LifetimeCount.parseRetention(bad), bad);
        }
    }

    private static ConfigRecord command(String json) throws MalformedRecordException {
        return ConfigTopic.parse(json.getBytes(StandardCharsets.UTF_8));
    }
}
