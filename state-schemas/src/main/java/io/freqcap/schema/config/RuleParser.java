package io.freqcap.schema.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.message.OutboundMessage;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads one rule of a limit config and checks it against contract.md §3, saying which check a
 * rejected one broke, with the path of the field ({@code rules[2].limits[0].max}).
 */
final class RuleParser {
    private RuleParser() {}

    /** Size bounds (contract.md §3): no config can make an output too large or a decision slow. */
    static final int MAX_LIMITS_PER_LIST = 16;

    static final int MAX_NAMED_LISTS = 64;
    static final int MAX_SEGMENT_ID_CHARS = 64;

    /**
     * Holds reach at most the longest window (calendar limits counting as contract.md §6 says), so
     * that a held message never makes a later one STALE.
     */
    static void checkHolds(Map<String, Rule> rules, String path, long longest)
            throws MalformedRecordException {
        int i = 0;
        for (Rule r : rules.values()) {
            if (r.deferral().holdMillis() > longest) {
                throw new MalformedRecordException(
                        path
                                + "["
                                + i
                                + "].hold: "
                                + r.deferral().hold()
                                + " is longer than the config's longest window ("
                                + longest / 1000
                                + " s)");
            }
            i++;
        }
    }

    static Rule rule(JsonNode node, String path) throws MalformedRecordException {
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
        List<Limit> limits = limits(node.get("limits"), path + ".limits", false, true);
        Map<String, List<Limit>> channels =
                named(node.get("channels"), path, "channels", "channel", true);
        Map<String, List<Limit>> categories =
                named(node.get("categories"), path, "categories", "category", true);
        JsonNode campaignNode = node.get("campaign");
        List<Limit> campaignList =
                campaignNode == null || campaignNode.isNull()
                        ? List.of()
                        : limits(campaignNode, path + ".campaign", true, true, true);
        // Lifetime limits apart: they have no window for the rolling and calendar checks to read.
        List<Limit> campaign = campaignList.stream().filter(l -> !l.lifetime()).toList();
        List<Limit> lifetime = campaignList.stream().filter(Limit::lifetime).toList();
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
        List<Limit> campaigns = optionalLimits(node, "campaigns", path);
        JsonNode preemptNode = node.get("preempt");
        if (preemptNode != null && !preemptNode.isNull() && !preemptNode.isBoolean()) {
            throw new MalformedRecordException(path + ".preempt: expected true or false");
        }
        boolean preempt = preemptNode != null && preemptNode.asBoolean(false);
        JsonNode fatigueNode = node.get("fatigue");
        Fatigue fatigue =
                fatigueNode == null || fatigueNode.isNull()
                        ? null
                        : fatigue(fatigueNode, path + ".fatigue");
        return new Rule(
                seg.textValue(),
                new Rule.Caps(limits, channels, categories, campaign, campaigns, lifetime),
                new Rule.Deferral(hold, holdMillis, quiet),
                preempt,
                fatigue);
    }

    /** The rule's reservable limits under {@code field}, none where it is missing or null. */
    private static List<Limit> optionalLimits(JsonNode rule, String field, String path)
            throws MalformedRecordException {
        JsonNode n = rule.get(field);
        return n == null || n.isNull() ? List.of() : limits(n, path + "." + field, true, true);
    }

    /**
     * Limits by channel or category name: {@code {"email": [...], ...}}.
     *
     * @param reservable whether a limit may carry a {@code reserve}
     */
    static Map<String, List<Limit>> named(
            JsonNode node, String path, String field, String what, boolean reservable)
            throws MalformedRecordException {
        return named(node, path, field, what, reservable, false);
    }

    /**
     * @param anyCategory names are any category a message may carry (1..64 code points, contract.md
     *     §10), not the channel pattern
     */
    static Map<String, List<Limit>> named(
            JsonNode node,
            String path,
            String field,
            String what,
            boolean reservable,
            boolean anyCategory)
            throws MalformedRecordException {
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
            String bad =
                    anyCategory
                            ? (OutboundMessage.isCategory(name)
                                    ? null
                                    : " names must be 1.."
                                            + OutboundMessage.MAX_CATEGORY_CHARS
                                            + " characters, got "
                                            + name.codePointCount(0, name.length()))
                            : (OutboundMessage.CHANNEL.matcher(name).matches()
                                    ? null
                                    : " \"" + name + "\" does not match [a-z0-9_-]{1,32}");
            if (bad != null) {
                throw new MalformedRecordException(path + "." + field + ": " + what + bad);
            }
            out.put(name, limits(e.getValue(), path + "." + field + "." + name, true, reservable));
        }
        return Collections.unmodifiableMap(out);
    }

    /**
     * A list of limits (contract.md §3), bounded.
     *
     * @param reservable whether a limit may carry a {@code reserve}
     */
    static List<Limit> limits(JsonNode node, String path, boolean mayBeEmpty, boolean reservable)
            throws MalformedRecordException {
        return limits(node, path, mayBeEmpty, reservable, false);
    }

    /**
     * The same, where {@code lifetime} says whether a limit may be a lifetime one (a rule's {@code
     * campaign} list, contract.md §3): elsewhere a {@code lifetime} that is not null is invalid.
     */
    private static List<Limit> limits(
            JsonNode node, String path, boolean mayBeEmpty, boolean reservable, boolean lifetime)
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
            boolean hasLifetime = isLifetime(l.get("lifetime"), p, lifetime);
            if (lifetime
                    && (hasWindow ? 1 : 0) + (hasCalendar ? 1 : 0) + (hasLifetime ? 1 : 0) != 1) {
                throw new MalformedRecordException(
                        p + ": exactly one of window, calendar and lifetime");
            }
            if (!lifetime && hasWindow == hasCalendar) {
                throw new MalformedRecordException(p + ": exactly one of window and calendar");
            }
            long millis = 0;
            if (hasLifetime) {
                // nothing to read: a lifetime limit has no window
            } else if (hasCalendar) {
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
            Limit limit;
            if (hasLifetime) {
                limit = Limit.lifetime(m.intValue());
            } else if (hasCalendar) {
                try {
                    limit = Limit.calendar(calendar.textValue(), m.intValue());
                } catch (MalformedRecordException e) {
                    throw new MalformedRecordException(p + "." + e.getMessage());
                }
            } else {
                limit = Limit.rolling(w.textValue(), millis, m.intValue());
            }
            JsonNode reserve = l.get("reserve");
            if (!reservable && reserve != null && !reserve.isNull()) {
                throw new MalformedRecordException(p + ".reserve: not allowed here");
            }
            out.add(
                    reserve == null || reserve.isNull()
                            ? limit
                            : limit.reserving(reserve(reserve, p + ".reserve", limit.max())));
        }
        return Collections.unmodifiableList(out);
    }

    /**
     * Whether a limit's {@code lifetime} makes it a lifetime limit: {@code true} where one may be;
     * absent or null, not; anything else invalid.
     */
    private static boolean isLifetime(JsonNode node, String path, boolean allowed)
            throws MalformedRecordException {
        if (node == null || node.isNull()) {
            return false;
        }
        if (!allowed) {
            throw new MalformedRecordException(
                    path + ".lifetime: only a limit in a rule's campaign list may be one");
        }
        if (!node.isBoolean() || !node.booleanValue()) {
            throw new MalformedRecordException(path + ".lifetime: expected true, got " + node);
        }
        return true;
    }

    /** Reads {@code {"after": 5, "scale": 0.5, "floor": 1, "window": "30d"}}, bounded. */
    static Fatigue fatigue(JsonNode node, String path) throws MalformedRecordException {
        if (!node.isObject()) {
            throw new MalformedRecordException(path + ": expected an object");
        }
        int after = boundedInt(node.get("after"), path + ".after", 1, Fatigue.MAX_AFTER);
        JsonNode s = node.get("scale");
        // 1e400 reads as an infinite double, which no BigDecimal holds
        BigDecimal scale =
                s != null
                                && s.isNumber()
                                && (!s.isFloatingPointNumber() || Double.isFinite(s.doubleValue()))
                        ? s.decimalValue()
                        : null;
        if (scale == null
                || scale.compareTo(new BigDecimal("0.01")) < 0
                || scale.compareTo(new BigDecimal("0.99")) > 0
                || scale.stripTrailingZeros().scale() > 2) {
            throw new MalformedRecordException(
                    path
                            + ".scale: expected a number 0.01..0.99 with at most two decimals, got "
                            + s);
        }
        int floor = boundedInt(node.get("floor"), path + ".floor", 0, Limit.MAX_MAX);
        JsonNode w = node.get("window");
        if (w == null || !w.isTextual()) {
            throw new MalformedRecordException(path + ".window: expected a string like \"30d\"");
        }
        long millis;
        try {
            millis = Limit.parseWindow(w.textValue());
        } catch (MalformedRecordException e) {
            throw new MalformedRecordException(path + "." + e.getMessage());
        }
        return new Fatigue(
                after, scale.movePointRight(2).intValueExact(), floor, w.textValue(), millis);
    }

    /** {@code {"slots": 1..max, "priority": 1..100}} (contract.md §3). */
    private static Limit.Reserve reserve(JsonNode node, String path, int max)
            throws MalformedRecordException {
        if (!node.isObject()) {
            throw new MalformedRecordException(path + ": expected an object");
        }
        int slots = boundedInt(node.get("slots"), path + ".slots", 1, max);
        int priority =
                boundedInt(
                        node.get("priority"), path + ".priority", 1, OutboundMessage.MAX_PRIORITY);
        return new Limit.Reserve(slots, priority);
    }

    static int boundedInt(JsonNode v, String path, int min, int max)
            throws MalformedRecordException {
        if (v == null
                || !v.isIntegralNumber()
                || !v.canConvertToInt()
                || v.intValue() < min
                || v.intValue() > max) {
            throw new MalformedRecordException(
                    path + ": expected an integer " + min + ".." + max + ", got " + v);
        }
        return v.intValue();
    }
}
