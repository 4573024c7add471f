package io.freqcap.schema;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.LimitConfig;

/**
 * Limit configs as the config topic carries them (contract.md §3), written the way tests read them:
 * {@code version(1).rule(rule("*", window("1d", 2)).channel("email", window("1h", 1)))}.
 */
public final class Configs {
    private Configs() {}

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    /** A config of this version; add rules, then take its {@link Config#json}. */
    public static Config version(long version) {
        ObjectNode root = JSON.objectNode().put("version", version);
        root.putArray("rules");
        return new Config(root);
    }

    /** A rolling limit: at most {@code max} within {@code window} ({@code "1d"}, {@code "7d"}). */
    public static ObjectNode window(String window, int max) {
        return JSON.objectNode().put("window", window).put("max", max);
    }

    /** A calendar limit: at most {@code max} a {@code day}, {@code week} or {@code month}. */
    public static ObjectNode calendar(String period, int max) {
        return JSON.objectNode().put("calendar", period).put("max", max);
    }

    /** A lifetime limit (a rule's {@code campaign} list only): at most {@code max}, ever. */
    public static ObjectNode lifetime(int max) {
        return JSON.objectNode().put("lifetime", true).put("max", max);
    }

    /** {@code limit} keeping its last {@code slots} places for messages of {@code priority}. */
    public static ObjectNode reserving(ObjectNode limit, int slots, int priority) {
        limit.putObject("reserve").put("slots", slots).put("priority", priority);
        return limit;
    }

    /** The rule of a segment ({@code *} for everyone else) with its limits over every message. */
    public static Rule rule(String segment, ObjectNode... limits) {
        ObjectNode r = JSON.objectNode().put("segment", segment);
        list(r.putArray("limits"), limits);
        return new Rule(r);
    }

    private static ArrayNode list(ArrayNode to, ObjectNode... limits) {
        for (ObjectNode l : limits) {
            to.add(l);
        }
        return to;
    }

    /** A rule being written. */
    public record Rule(ObjectNode node) {
        /** Limits over one channel's messages. */
        public Rule channel(String channel, ObjectNode... limits) {
            list(node.with("channels").putArray(channel), limits);
            return this;
        }

        /** Limits over one category's messages. */
        public Rule category(String category, ObjectNode... limits) {
            list(node.with("categories").putArray(category), limits);
            return this;
        }

        /** Limits over each campaign's messages. */
        public Rule campaign(ObjectNode... limits) {
            list(node.putArray("campaign"), limits);
            return this;
        }

        /** Limits over the distinct campaigns of the user's messages. */
        public Rule campaigns(ObjectNode... limits) {
            list(node.putArray("campaigns"), limits);
            return this;
        }

        /** A message this rule would hold back may take the place of lower-priority held ones. */
        /** Lowers the rule's limits for a user who stopped engaging (contract.md §3). */
        public Rule fatigue(int after, String scale, int floor, String window) {
            node.putObject("fatigue")
                    .put("after", after)
                    .put("scale", new java.math.BigDecimal(scale))
                    .put("floor", floor)
                    .put("window", window);
            return this;
        }

        public Rule preempt() {
            node.put("preempt", true);
            return this;
        }

        /** How long a message may be held to pass. */
        public Rule hold(String hold) {
            node.put("hold", hold);
            return this;
        }

        /** Quiet hours, for every channel or the ones named. */
        public Rule quietHours(String from, String to, String... channels) {
            ObjectNode q = node.putObject("quietHours").put("from", from).put("to", to);
            if (channels.length > 0) {
                ArrayNode a = q.putArray("channels");
                for (String c : channels) {
                    a.add(c);
                }
            }
            return this;
        }
    }

    /** A config being written. */
    public record Config(ObjectNode root) {
        public Config rule(Rule rule) {
            ((ArrayNode) root.get("rules")).add(rule.node());
            return this;
        }

        /** A shadow rule (contract.md §3): evaluated, never enforced. */
        public Config shadow(Rule rule) {
            ObjectNode shadow = root.with("shadow");
            (shadow.has("rules") ? (ArrayNode) shadow.get("rules") : shadow.putArray("rules"))
                    .add(rule.node());
            return this;
        }

        public Config timezone(String zone) {
            root.put("timezone", zone);
            return this;
        }

        /** Categories no limit applies to. */
        public Config exempt(String... categories) {
            ArrayNode a = root.putArray("exempt");
            for (String c : categories) {
                a.add(c);
            }
            return this;
        }

        public Config maxHeld(int maxHeld) {
            root.put("maxHeld", maxHeld);
            return this;
        }

        public String json() {
            return root.toString();
        }

        /** The config parsed; a test's config must be valid. */
        public LimitConfig parsed() {
            try {
                return LimitConfig.parse(json());
            } catch (MalformedRecordException e) {
                throw new IllegalArgumentException(json(), e);
            }
        }
    }
}
