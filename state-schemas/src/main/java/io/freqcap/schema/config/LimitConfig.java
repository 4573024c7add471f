package io.freqcap.schema.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.message.OutboundMessage;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A validated limit configuration (contract.md §3) and the lookups the rule makes of it. Instances
 * only exist for configs that pass every rule of the contract; {@link #parse} ({@link
 * LimitConfigParser}) says which rule a rejected one broke.
 *
 * @param rules by segmentId, always including {@link #DEFAULT_SEGMENT}
 * @param json the config as it arrived, kept so that state can hold it as text
 * @param windows how far back the rules reach, worked out once from them
 * @param maxHeld how many held messages one user may have waiting (contract.md §3)
 */
public record LimitConfig(
        long version,
        Map<String, Rule> rules,
        Set<String> exempt,
        String json,
        String timezone,
        Map<String, Rule> shadow,
        Windows windows,
        int maxHeld)
        implements ConfigRecord, java.io.Serializable {

    /** {@code maxHeld} when a config gives none. */
    public static final int DEFAULT_MAX_HELD = 100;

    public static final int MAX_MAX_HELD = 10_000;

    /**
     * How far back the rules reach.
     *
     * @param longest the longest window of any rule (not shadow rules): it bounds STALE
     * @param kept how far back histories reach: twice this is kept. The longest window of the rules
     *     and the shadow rules, so that shadow decisions are exact too, and of their {@code
     *     fatigue} (contract.md §6)
     * @param fatigue the longest {@code fatigue.window} of the rules and shadow rules; 0 when none
     *     has a {@code fatigue}
     */
    public record Windows(long longest, long kept, long fatigue) implements java.io.Serializable {
        /** The windows of these rules and shadow rules. */
        public static Windows of(Map<String, Rule> rules, Map<String, Rule> shadow) {
            long longest = Rule.longestWindow(rules);
            long fatigue =
                    Math.max(Rule.longestFatigueWindow(rules), Rule.longestFatigueWindow(shadow));
            return new Windows(
                    longest,
                    Math.max(Math.max(longest, Rule.longestWindow(shadow)), fatigue),
                    fatigue);
        }
    }

    /** A config in UTC without shadow rules, with the default {@code maxHeld}. */
    public static LimitConfig of(long version, Map<String, Rule> rules) {
        return new LimitConfig(
                version,
                rules,
                Set.of(),
                "{}",
                "UTC",
                Map.of(),
                Windows.of(rules, Map.of()),
                DEFAULT_MAX_HELD);
    }

    /**
     * Whether a rule or a shadow rule has a {@code fatigue} (contract.md §3): only then does a
     * decision read the user's last engagement.
     */
    public boolean fatigues() {
        return windows.fatigue() > 0;
    }

    /**
     * The longest {@code fatigue.window} of the rules alone, 0 when none has a {@code fatigue}:
     * with their longest window, how far a message may reach back, so what a sweep makes STALE. A
     * shadow rule's never does (contract.md §3, §6).
     */
    public long rulesFatigueWindowMillis() {
        return Rule.longestFatigueWindow(rules);
    }

    /**
     * Whether a rule or a shadow rule has a lifetime limit (contract.md §3): from the first config
     * in force that has one on, the job counts every user's messages of every campaign.
     */
    public boolean hasLifetime() {
        for (Map<String, Rule> rs : List.of(rules, shadow)) {
            for (Rule r : rs.values()) {
                if (!r.caps().lifetime().isEmpty()) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether the config has shadow rules (contract.md §3): evaluated, never enforced. */
    public boolean hasShadow() {
        return !shadow.isEmpty();
    }

    /** Whether a rule may preempt held messages (contract.md §3 {@code preempt}). */
    public boolean preempts() {
        for (Rule r : rules.values()) {
            if (r.preempt()) {
                return true;
            }
        }
        return false;
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
     * shadow rules, so that shadow decisions are exact too, and of their {@code fatigue}
     * (contract.md §6).
     */
    public long keptWindowMillis() {
        return windows.kept();
    }

    public static final String DEFAULT_SEGMENT = "*";

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
    public long longestWindowMillis() {
        return windows.longest();
    }

    /** Reads and validates a config; a command on the config topic is an error here. */
    public static LimitConfig parse(byte[] value) throws MalformedRecordException {
        ObjectNode root = Json.readExactObject(value);
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

    public static final int MAX_LIMITS_PER_LIST = RuleParser.MAX_LIMITS_PER_LIST;
    public static final int MAX_NAMED_LISTS = RuleParser.MAX_NAMED_LISTS;
    public static final int MAX_SEGMENT_ID_CHARS = RuleParser.MAX_SEGMENT_ID_CHARS;

    static LimitConfig fromTree(ObjectNode root, byte[] raw) throws MalformedRecordException {
        JsonNode v = root.get("version");
        if (v == null || v.isNull()) {
            throw new MalformedRecordException("version: required field is missing");
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.longValue() <= 0) {
            throw new MalformedRecordException("version: expected a positive integer, got " + v);
        }
        Map<String, Rule> rules = rules(root.get("rules"), "rules");
        JsonNode zone = root.get("timezone");
        if (zone != null
                && !zone.isNull()
                && !(zone.isTextual() && OutboundMessage.isKnownZone(zone.textValue()))) {
            throw new MalformedRecordException(
                    "timezone: not a time-zone id this job knows, got " + zone);
        }
        JsonNode shadow = root.get("shadow");
        Map<String, Rule> shadowMap =
                shadow == null || shadow.isNull()
                        ? new LinkedHashMap<>()
                        : rules(shadow.isObject() ? shadow.get("rules") : null, "shadow.rules");
        RuleParser.checkHolds(rules, "rules", Rule.longestWindow(rules));
        RuleParser.checkHolds(
                shadowMap,
                "shadow.rules",
                Math.max(Rule.longestWindow(rules), Rule.longestWindow(shadowMap)));
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
                Windows.of(rules, shadowMap),
                maxHeld);
    }

    /** A list of rules, by segment: one of them for {@code *}, none for a segment twice. */
    private static Map<String, Rule> rules(JsonNode node, String path)
            throws MalformedRecordException {
        if (node == null || !node.isArray() || node.isEmpty()) {
            throw new MalformedRecordException(path + ": expected a non-empty array");
        }
        if (node.size() > MAX_RULES) {
            throw new MalformedRecordException(
                    path + ": at most " + MAX_RULES + " rules, got " + node.size());
        }
        Map<String, Rule> rules = new LinkedHashMap<>();
        for (int i = 0; i < node.size(); i++) {
            Rule rule = RuleParser.rule(node.get(i), path + "[" + i + "]");
            if (rules.put(rule.segment(), rule) != null) {
                throw new MalformedRecordException(
                        path + "[" + i + "].segment: \"" + rule.segment() + "\" has two rules");
            }
        }
        if (!rules.containsKey(DEFAULT_SEGMENT)) {
            throw new MalformedRecordException(path + ": exactly one rule must have segment \"*\"");
        }
        return rules;
    }
}
