package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.Scope;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.preference.UserPreferences;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * What a user's own say does to their messages (contract.md §10), beside the rule ({@link
 * CappingRule}) that checks it with the segment's: an opt-out of a channel or category rejects a
 * message, never held, and cancels the held messages it covers; a pause closes the times before its
 * end as quiet hours do, so a rule's {@code hold} may hold a message through it, and cancels the
 * held messages due before its end; the user's limits are checked with the rule's, against the same
 * history, and reported as {@code preference:<scope>}. Plain Java.
 */
public final class PreferenceRule {
    private PreferenceRule() {}

    /**
     * The rule's scopes with the user's limits after them (every message, its channel, its
     * category); scopes without limits are left out.
     *
     * @param prefs the user's preferences, or null for none
     */
    static List<ScopeLimits> withUserLimits(
            List<ScopeLimits> rule, OutboundMessage m, UserPreferences prefs) {
        if (prefs == null) {
            return rule;
        }
        if (!prefs.limits().isEmpty()) {
            rule.add(new ScopeLimits(Scope.ALL, prefs.limits(), true));
        }
        List<Limit> channel = prefs.channels().get(m.channel());
        if (channel != null && !channel.isEmpty()) {
            rule.add(new ScopeLimits(Scope.channel(m.channel()), channel, true));
        }
        List<Limit> category = prefs.categories().get(m.category());
        if (category != null && !category.isEmpty()) {
            rule.add(new ScopeLimits(Scope.category(m.category()), category, true));
        }
        return rule;
    }

    /** The end of the user's pause; {@link Long#MIN_VALUE} without one. */
    static long pausedUntil(UserPreferences prefs) {
        return prefs == null || prefs.pausedUntil() == null ? Long.MIN_VALUE : prefs.pausedUntil();
    }

    /** What the user opted out of that {@code m} falls in: its channel, its category or both. */
    static List<Violation> optOuts(UserPreferences prefs, OutboundMessage m) {
        List<Violation> violations = new ArrayList<>(4);
        if (prefs.optOutChannels().contains(m.channel())) {
            violations.add(Violation.optedOutOfChannel(m.channel()));
        }
        if (prefs.optOutCategories().contains(m.category())) {
            violations.add(Violation.optedOutOfCategory(m.category()));
        }
        return violations;
    }

    /**
     * Whether the user's preferences reject {@code m} whatever is counted (an opt-out, a pause for
     * good): then no held message is worth giving up for it.
     *
     * @param prefs the user's preferences, or null for none
     */
    public static boolean neverPasses(UserPreferences prefs, OutboundMessage m) {
        return prefs != null
                && (prefs.optsOut(m.channel(), m.category()) || prefs.pausedAt(Long.MAX_VALUE));
    }

    /**
     * Why a held message of this channel and category, sent at {@code sendAt}, is cancelled by its
     * user's new preferences: an opt-out of its channel or category, or a pause past its send time;
     * null when they leave it be.
     */
    public static String cancels(UserPreferences p, String channel, String category, long sendAt) {
        if (channel != null && p.optOutChannels().contains(channel)) {
            return "opted out of channel " + channel;
        }
        if (category != null && p.optOutCategories().contains(category)) {
            return "opted out of category " + category;
        }
        if (p.pausedAt(sendAt)) {
            return "paused until " + Instant.ofEpochMilli(p.pausedUntil());
        }
        return null;
    }
}
