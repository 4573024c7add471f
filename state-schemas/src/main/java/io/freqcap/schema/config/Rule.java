package io.freqcap.schema.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What a segment's users may get (contract.md §3): limits over every message and per scope, how
 * long a message may be held to pass, and quiet hours.
 *
 * @param caps the rule's limits, by scope
 * @param deferral how long a message may be held to pass, and quiet hours
 * @param preempt whether a message this rule's limits would hold back may take the place of held
 *     messages of lower priority that are still waiting (contract.md §6); shadow rules never do
 * @param fatigue how the rule's limits are lowered for a user who stopped engaging, or null: never
 */
public record Rule(String segment, Caps caps, Deferral deferral, boolean preempt, Fatigue fatigue)
        implements java.io.Serializable {

    /**
     * A rule's limits, by scope.
     *
     * @param all count every non-exempt counted message of the user
     * @param channels extra limits counting only one channel's messages
     * @param categories extra limits counting only one category's messages
     * @param campaign extra limits counting only the messages of the message's own campaign
     * @param campaigns limits counting distinct campaigns: a message of a campaign passes only if
     *     no interval or period containing it holds more than max campaigns with its own
     *     (contract.md §3)
     * @param lifetime the lifetime limits of the {@code campaign} list (the others are in {@code
     *     campaign}): the user's counted messages of the message's campaign, ever
     */
    public record Caps(
            List<Limit> all,
            Map<String, List<Limit>> channels,
            Map<String, List<Limit>> categories,
            List<Limit> campaign,
            List<Limit> campaigns,
            List<Limit> lifetime)
            implements java.io.Serializable {}

    /**
     * When a rule sends a message later, or not now.
     *
     * @param hold how long after its timestamp a message may be held to pass (window syntax), or
     *     null: none held
     * @param holdMillis {@code hold} in milliseconds; 0 for none
     * @param quietHours when messages are not sent, or null for none
     */
    public record Deferral(String hold, long holdMillis, QuietHours quietHours)
            implements java.io.Serializable {
        public static final Deferral NONE = new Deferral(null, 0, null);
    }

    /** The quiet hours that hold back messages of {@code channel}, or null. */
    public QuietHours quietHoursFor(String channel) {
        QuietHours quietHours = deferral.quietHours();
        return quietHours != null && quietHours.appliesTo(channel) ? quietHours : null;
    }

    /** Whether the rule can give a message a later send time, or reject it for quiet hours. */
    public boolean defers() {
        return deferral.holdMillis() > 0 || deferral.quietHours() != null;
    }

    // Most rules name no channel or category: no lookup (a hash of the message's fresh string)
    // for them, on every message.
    public List<Limit> channelLimits(String channel) {
        Map<String, List<Limit>> channels = caps.channels();
        return channels.isEmpty() ? List.of() : channels.getOrDefault(channel, List.of());
    }

    public List<Limit> categoryLimits(String category) {
        Map<String, List<Limit>> categories = caps.categories();
        return categories.isEmpty() ? List.of() : categories.getOrDefault(category, List.of());
    }

    /** Every limit of the rule, whatever its scope. */
    public List<Limit> allLimits() {
        List<Limit> all = new ArrayList<>(caps.all());
        caps.channels().values().forEach(all::addAll);
        caps.categories().values().forEach(all::addAll);
        all.addAll(caps.campaign());
        all.addAll(caps.campaigns());
        return all;
    }

    /** The longest {@code fatigue.window} of these rules (0 for none). */
    public static long longestFatigueWindow(Map<String, Rule> rules) {
        long longest = 0;
        for (Rule r : rules.values()) {
            if (r.fatigue() != null) {
                longest = Math.max(longest, r.fatigue().windowMillis());
            }
        }
        return longest;
    }

    /** The longest window of these rules' limits (0 for none). */
    public static long longestWindow(Map<String, Rule> rules) {
        long longest = 0;
        for (Rule r : rules.values()) {
            for (Limit l : r.allLimits()) {
                longest = Math.max(longest, l.windowMillis());
            }
        }
        return longest;
    }
}
