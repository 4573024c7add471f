package io.freqcap.schema.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What a segment's users may get (contract.md §3): limits over every message and per scope, how
 * long a message may be held to pass, and quiet hours.
 *
 * @param limits count every non-exempt counted message of the user
 * @param channels extra limits counting only one channel's messages
 * @param categories extra limits counting only one category's messages
 * @param campaign extra limits counting only the messages of the message's own campaign
 * @param campaigns limits counting distinct campaigns: a message of a campaign passes only if no
 *     interval or period containing it holds more than max campaigns with its own (contract.md §3)
 * @param hold how long after its timestamp a message may be held to pass (window syntax), or null:
 *     none held
 * @param holdMillis {@code hold} in milliseconds; 0 for none
 * @param quietHours when messages are not sent, or null for none
 * @param preempt whether a message this rule's limits would hold back may take the place of held
 *     messages of lower priority that are still waiting (contract.md §6); shadow rules never do
 * @param fatigue how the rule's limits are lowered for a user who stopped engaging, or null: never
 */
public record Rule(
        String segment,
        List<Limit> limits,
        Map<String, List<Limit>> channels,
        Map<String, List<Limit>> categories,
        List<Limit> campaign,
        List<Limit> campaigns,
        String hold,
        long holdMillis,
        QuietHours quietHours,
        boolean preempt,
        Fatigue fatigue)
        implements java.io.Serializable {

    /** A rule whose limits no engagement lowers. */
    public Rule(
            String segment,
            List<Limit> limits,
            Map<String, List<Limit>> channels,
            Map<String, List<Limit>> categories,
            List<Limit> campaign,
            List<Limit> campaigns,
            String hold,
            long holdMillis,
            QuietHours quietHours,
            boolean preempt) {
        this(
                segment,
                limits,
                channels,
                categories,
                campaign,
                campaigns,
                hold,
                holdMillis,
                quietHours,
                preempt,
                null);
    }

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
        this(segment, limits, channels, categories, campaign, List.of(), null, 0, null, false);
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
    public List<Limit> allLimits() {
        List<Limit> all = new ArrayList<>(limits);
        channels.values().forEach(all::addAll);
        categories.values().forEach(all::addAll);
        all.addAll(campaign);
        all.addAll(campaigns);
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
