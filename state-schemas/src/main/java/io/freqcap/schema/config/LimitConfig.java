package io.freqcap.schema.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.message.OutboundMessage;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A validated limit configuration (contract.md §3). Instances only exist for configs that pass
 * every rule of the contract; {@link #parse} says which rule a rejected one broke.
 *
 * @param rules by segmentId, always including {@link #DEFAULT_SEGMENT}
 * @param json the config as it arrived, kept so that state can hold it as text
 * @param maxHeld how many held messages one user may have waiting (contract.md §3)
 *     <p>Why one long class: the config's JSON, its validation and the lookups the rule makes,
 *     which contract.md §3 defines together.
 */
public record LimitConfig(
        long version,
        Map<String, Rule> rules,
        Set<String> exempt,
        String json,
        String timezone,
        Map<String, Rule> shadow,
        long longestWindowMillis,
        long keptWindowMillis,
        int maxHeld)
        implements ConfigRecord, java.io.Serializable {

    /** {@code maxHeld} when a config gives none. */
    public static final int DEFAULT_MAX_HELD = 100;

    public static final int MAX_MAX_HELD = 10_000;

    /**
     * A config; its longest windows are worked out once here, not for every message.
     *
     * @param shadow the shadow rules by segment, empty for none
     */
    public LimitConfig(
            long version,
            Map<String, Rule> rules,
            Set<String> exempt,
            String json,
            String timezone,
            Map<String, Rule> shadow) {
        this(version, rules, exempt, json, timezone, shadow, DEFAULT_MAX_HELD);
    }

    /** A config with its own {@code maxHeld}. */
    public LimitConfig(
            long version,
            Map<String, Rule> rules,
            Set<String> exempt,
            String json,
            String timezone,
            Map<String, Rule> shadow,
            int maxHeld) {
        this(
                version,
                rules,
                exempt,
                json,
                timezone,
                shadow,
                longest(rules),
                Math.max(longest(rules), longest(shadow)),
                maxHeld);
    }

    /** A config in UTC without shadow rules. */
    public LimitConfig(long version, Map<String, Rule> rules, Set<String> exempt, String json) {
        this(version, rules, exempt, json, "UTC", Map.of());
    }

    private static long longest(Map<String, Rule> rules) {
        long longest = 0;
        for (Rule r : rules.values()) {
            for (Limit l : r.allLimits()) {
                longest = Math.max(longest, l.windowMillis());
            }
        }
        return longest;
    }

    /** Whether the config has shadow rules (contract.md §3): evaluated, never enforced. */
    public boolean hasShadow() {
        return !shadow.isEmpty();
    }

    /** The shadow rule for users in {@code segment}, or the shadow {@code *} rule. */
    public Rule shadowRuleFor(String segment) {
        Rule r = segment == null ? null : shadow.get(segment);
        return r != null ? r : shadow.get(DEFAULT_SEGMENT);
    }

    public boolean hasShadowRule(String segment) {
        return shadow.containsKey(segment);
    }

    /**
     * How far back histories reach: twice this is kept. The longest window of the rules and the
     * shadow rules, so that shadow decisions are exact too (contract.md §6).
     */
    @Override
    public long keptWindowMillis() {
        return keptWindowMillis;
    }

    public static final String DEFAULT_SEGMENT = "*";

    /**
     * @param limits count every non-exempt counted message of the user
     * @param channels extra limits counting only one channel's messages
     * @param categories extra limits counting only one category's messages
     * @param campaign extra limits counting only the messages of the message's own campaign
     * @param hold how long after its timestamp a message may be held to pass (window syntax), or
     *     null: none held
     * @param holdMillis {@code hold} in milliseconds; 0 for none
     * @param quietHours when messages are not sent, or null for none
     */
    public record Rule(
            String segment,
            List<Limit> limits,
            Map<String, List<Limit>> channels,
            Map<String, List<Limit>> categories,
            List<Limit> campaign,
            String hold,
            long holdMillis,
            QuietHours quietHours)
            implements java.io.Serializable {

        /** A rule with limits over every message and per channel only. */
        public Rule(String segment, List<Limit> limits, Map<String, List<Limit>> channels) {
            this(segment, limits, channels, Map.of(), List.of());
        }

        /** A rule that holds nothing and has no quiet hours. */
        public Rule(
                String segment,
                List<Limit> limits,
                Map<String, List<Limit>> channels,
                Map<String, List<Limit>> categories,
                List<Limit> campaign) {
            this(segment, limits, channels, categories, campaign, null, 0, null);
        }

        /** The quiet hours that hold back messages of {@code channel}, or null. */
        public QuietHours quietHoursFor(String channel) {
            return quietHours != null && quietHours.appliesTo(channel) ? quietHours : null;
        }

        /** Whether the rule can give a message a later send time, or reject it for quiet hours. */
        public boolean defers() {
            return holdMillis > 0 || quietHours != null;
        }

        // Most rules name no channel or category: no lookup (a hash of the message's fresh string)
        // for them, on every message.
        public List<Limit> channelLimits(String channel) {
            return channels.isEmpty() ? List.of() : channels.getOrDefault(channel, List.of());
        }

        public List<Limit> categoryLimits(String category) {
            return categories.isEmpty() ? List.of() : categories.getOrDefault(category, List.of());
        }

        /** Every limit of the rule, whatever its scope. */
        List<Limit> allLimits() {
            List<Limit> all = new ArrayList<>(limits);
            channels.values().forEach(all::addAll);
            categories.values().forEach(all::addAll);
            all.addAll(campaign);
            return all;
        }
    }

    /** The rule for users in {@code segment}, or the {@code *} rule when it has none. */
    public Rule ruleFor(String segment) {
        Rule r = segment == null ? null : rules.get(segment);
        return r != null ? r : rules.get(DEFAULT_SEGMENT);
    }

    public boolean hasRule(String segment) {
        return rules.containsKey(segment);
    }

    public boolean isExempt(String category) {
        return exempt.contains(category);
    }

    /** The longest window of any rule (not shadow rules): it bounds STALE. */
    @Override
    public long longestWindowMillis() {
        return longestWindowMillis;
    }

    /** Reads and validates a config; a command on the config topic is an error here. */
    public static LimitConfig parse(byte[] value) throws MalformedRecordException {
        ObjectNode root = Json.readObject(value);
        if (root.has("command")) {
            throw new MalformedRecordException("expected a limit config, got a command");
        }
        return fromTree(root, value);
    }

    public static LimitConfig parse(String json) throws MalformedRecordException {
        return parse(json.getBytes(StandardCharsets.UTF_8));
    }

    /** Size bounds (contract.md §3): no config can make an output too large or a decision slow. */
    public static final int MAX_RULES = 1000;

    public static final int MAX_LIMITS_PER_LIST = 16;
    public static final int MAX_NAMED_LISTS = 64;
    public static final int MAX_SEGMENT_ID_CHARS = 64;

    static LimitConfig fromTree(ObjectNode root, byte[] raw) throws MalformedRecordException {
        JsonNode v = root.get("version");
        if (v == null || v.isNull()) {
            throw new MalformedRecordException("version: required field is missing");
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.longValue() <= 0) {
            throw new MalformedRecordException("version: expected a positive integer, got " + v);
        }
        JsonNode rulesNode = root.get("rules");
        if (rulesNode == null || !rulesNode.isArray() || rulesNode.isEmpty()) {
            throw new MalformedRecordException("rules: expected a non-empty array");
        }
        if (rulesNode.size() > MAX_RULES) {
            throw new MalformedRecordException(
                    "rules: at most " + MAX_RULES + " rules, got " + rulesNode.size());
        }
        Map<String, Rule> rules = new LinkedHashMap<>();
        for (int i = 0; i < rulesNode.size(); i++) {
            Rule rule = rule(rulesNode.get(i), "rules[" + i + "]");
            if (rules.put(rule.segment(), rule) != null) {
                throw new MalformedRecordException(
                        "rules[" + i + "].segment: \"" + rule.segment() + "\" has two rules");
            }
        }
        if (!rules.containsKey(DEFAULT_SEGMENT)) {
            throw new MalformedRecordException("rules: exactly one rule must have segment \"*\"");
        }
        JsonNode zone = root.get("timezone");
        if (zone != null
                && !zone.isNull()
                && !(zone.isTextual() && OutboundMessage.isKnownZone(zone.textValue()))) {
            throw new MalformedRecordException(
                    "timezone: not a time-zone id this job knows, got " + zone);
        }
        JsonNode shadow = root.get("shadow");
        Map<String, Rule> shadowMap = new LinkedHashMap<>();
        if (shadow != null && !shadow.isNull()) {
            JsonNode shadowRules = shadow.isObject() ? shadow.get("rules") : null;
            if (shadowRules == null || !shadowRules.isArray() || shadowRules.isEmpty()) {
                throw new MalformedRecordException("shadow.rules: expected a non-empty array");
            }
            if (shadowRules.size() > MAX_RULES) {
                throw new MalformedRecordException(
                        "shadow.rules: at most " + MAX_RULES + " rules, got " + shadowRules.size());
            }
            for (int i = 0; i < shadowRules.size(); i++) {
                Rule rule = rule(shadowRules.get(i), "shadow.rules[" + i + "]");
                if (shadowMap.put(rule.segment(), rule) != null) {
                    throw new MalformedRecordException(
                            "shadow.rules["
                                    + i
                                    + "].segment: \""
                                    + rule.segment()
                                    + "\" has two rules");
                }
            }
            if (!shadowMap.containsKey(DEFAULT_SEGMENT)) {
                throw new MalformedRecordException(
                        "shadow.rules: exactly one rule must have segment \"*\"");
            }
        }
        checkHolds(rules, "rules", longest(rules));
        checkHolds(shadowMap, "shadow.rules", Math.max(longest(rules), longest(shadowMap)));
        Set<String> exempt = new LinkedHashSet<>();
        JsonNode ex = root.get("exempt");
        if (ex != null && !ex.isNull()) {
            if (!ex.isArray()) {
                throw new MalformedRecordException("exempt: expected an array of strings");
            }
            for (JsonNode e : ex) {
                if (!e.isTextual()) {
                    throw new MalformedRecordException(
                            "exempt: expected an array of strings, got " + e);
                }
                exempt.add(e.textValue());
            }
        }
        JsonNode held = root.get("maxHeld");
        int maxHeld = DEFAULT_MAX_HELD;
        if (held != null && !held.isNull()) {
            if (!held.isIntegralNumber()
                    || !held.canConvertToInt()
                    || held.intValue() < 1
                    || held.intValue() > MAX_MAX_HELD) {
                throw new MalformedRecordException(
                        "maxHeld: expected an integer 1.." + MAX_MAX_HELD + ", got " + held);
            }
            maxHeld = held.intValue();
        }
        return new LimitConfig(
                v.longValue(),
                Collections.unmodifiableMap(rules),
                Collections.unmodifiableSet(exempt),
                new String(raw, StandardCharsets.UTF_8),
                zone == null || zone.isNull() ? "UTC" : zone.textValue(),
                Collections.unmodifiableMap(shadowMap),
                maxHeld);
    }

    /**
     * Holds reach at most the longest window (calendar limits counting as contract.md §6 says), so
     * that a held message never makes a later one STALE.
     */
    private static void checkHolds(Map<String, Rule> rules, String path, long longest)
            throws MalformedRecordException {
        int i = 0;
        for (Rule r : rules.values()) {
            if (r.holdMillis() > longest) {
                throw new MalformedRecordException(
                        path
                                + "["
                                + i
                                + "].hold: "
                                + r.hold()
                                + " is longer than the config's longest window ("
                                + longest / 1000
                                + " s)");
            }
            i++;
        }
    }

    private static Rule rule(JsonNode node, String path) throws MalformedRecordException {
        if (!node.isObject()) {
            throw new MalformedRecordException(path + ": expected an object");
        }
        JsonNode seg = node.get("segment");
        if (seg == null || !seg.isTextual() || seg.textValue().isEmpty()) {
            throw new MalformedRecordException(path + ".segment: expected a non-empty string");
        }
        int chars = seg.textValue().codePointCount(0, seg.textValue().length());
        if (chars > MAX_SEGMENT_ID_CHARS) {
            throw new MalformedRecordException(
                    path
                            + ".segment: must be 1.."
                            + MAX_SEGMENT_ID_CHARS
                            + " characters, got "
                            + chars);
        }
        List<Limit> limits = limits(node.get("limits"), path + ".limits", false);
        Map<String, List<Limit>> channels =
                named(node.get("channels"), path, "channels", "channel");
        Map<String, List<Limit>> categories =
                named(node.get("categories"), path, "categories", "category");
        JsonNode campaignNode = node.get("campaign");
        List<Limit> campaign =
                campaignNode == null || campaignNode.isNull()
                        ? List.of()
                        : limits(campaignNode, path + ".campaign", true);
        JsonNode holdNode = node.get("hold");
        String hold = null;
        long holdMillis = 0;
        if (holdNode != null && !holdNode.isNull()) {
            if (!holdNode.isTextual()) {
                throw new MalformedRecordException(path + ".hold: expected a string like \"12h\"");
            }
            try {
                holdMillis = Limit.parseWindow(holdNode.textValue());
            } catch (MalformedRecordException e) {
                throw new MalformedRecordException(
                        path + ".hold" + e.getMessage().substring("window".length()));
            }
            hold = holdNode.textValue();
        }
        JsonNode quietNode = node.get("quietHours");
        QuietHours quiet =
                quietNode == null || quietNode.isNull()
                        ? null
                        : QuietHours.parse(quietNode, path + ".quietHours");
        return new Rule(
                seg.textValue(), limits, channels, categories, campaign, hold, holdMillis, quiet);
    }

    /** Limits by channel or category name: {@code {"email": [...], ...}}. */
    private static Map<String, List<Limit>> named(
            JsonNode node, String path, String field, String what) throws MalformedRecordException {
        Map<String, List<Limit>> out = new LinkedHashMap<>();
        if (node == null || node.isNull()) {
            return Collections.unmodifiableMap(out);
        }
        if (!node.isObject()) {
            throw new MalformedRecordException(path + "." + field + ": expected an object");
        }
        if (node.size() > MAX_NAMED_LISTS) {
            throw new MalformedRecordException(
                    path
                            + "."
                            + field
                            + ": at most "
                            + MAX_NAMED_LISTS
                            + " entries, got "
                            + node.size());
        }
        Iterator<Map.Entry<String, JsonNode>> it = node.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            String name = e.getKey();
            if (!OutboundMessage.CHANNEL.matcher(name).matches()) {
                throw new MalformedRecordException(
                        path
                                + "."
                                + field
                                + ": "
                                + what
                                + " \""
                                + name
                                + "\" does not match [a-z0-9_-]{1,32}");
            }
            out.put(name, limits(e.getValue(), path + "." + field + "." + name, true));
        }
        return Collections.unmodifiableMap(out);
    }

    private static List<Limit> limits(JsonNode node, String path, boolean mayBeEmpty)
            throws MalformedRecordException {
        if (node == null || !node.isArray() || (!mayBeEmpty && node.isEmpty())) {
            throw new MalformedRecordException(
                    path + ": expected " + (mayBeEmpty ? "an" : "a non-empty") + " array");
        }
        if (node.size() > MAX_LIMITS_PER_LIST) {
            throw new MalformedRecordException(
                    path + ": at most " + MAX_LIMITS_PER_LIST + " limits, got " + node.size());
        }
        List<Limit> out = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
            String p = path + "[" + i + "]";
            JsonNode l = node.get(i);
            if (!l.isObject()) {
                throw new MalformedRecordException(p + ": expected an object");
            }
            JsonNode w = l.get("window");
            JsonNode calendar = l.get("calendar");
            boolean hasWindow = w != null && !w.isNull();
            boolean hasCalendar = calendar != null && !calendar.isNull();
            if (hasWindow == hasCalendar) {
                throw new MalformedRecordException(p + ": exactly one of window and calendar");
            }
            long millis = 0;
            if (hasCalendar) {
                if (!calendar.isTextual()) {
                    throw new MalformedRecordException(
                            p + ".calendar: expected day, week or month, got " + calendar);
                }
            } else {
                if (!w.isTextual()) {
                    throw new MalformedRecordException(
                            p + ".window: expected a string like \"1d\"");
                }
                try {
                    millis = Limit.parseWindow(w.textValue());
                } catch (MalformedRecordException e) {
                    throw new MalformedRecordException(p + "." + e.getMessage());
                }
            }
            JsonNode m = l.get("max");
            if (m == null
                    || !m.isIntegralNumber()
                    || !m.canConvertToInt()
                    || m.intValue() < 0
                    || m.intValue() > Limit.MAX_MAX) {
                throw new MalformedRecordException(
                        p + ".max: expected an integer 0..1000000, got " + m);
            }
            if (hasCalendar) {
                try {
                    out.add(Limit.calendar(calendar.textValue(), m.intValue()));
                } catch (MalformedRecordException e) {
                    throw new MalformedRecordException(p + "." + e.getMessage());
                }
            } else {
                out.add(new Limit(w.textValue(), millis, m.intValue()));
            }
        }
        return Collections.unmodifiableList(out);
    }
}
