package io.freqcap.schema.preference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.JsonFields;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.config.LimitLists;
import io.freqcap.schema.message.OutboundMessage;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a user chose in a preference center (contract.md §10): channels and categories opted out of,
 * a pause, and limits of the user's own, in every scope of §3 but campaigns. Preferences only ever
 * hold messages back.
 *
 * @param version grows per user: a record whose version is not greater than the one in force
 *     changes nothing
 * @param pausedUntil no message before this instant (epoch ms), or null
 * @param limits count every message of the user, as a rule's {@code limits}
 * @param channels limits counting one channel's messages
 * @param categories limits counting one category's messages
 */
public record UserPreferences(
        long userId,
        long version,
        Set<String> optOutChannels,
        Set<String> optOutCategories,
        Long pausedUntil,
        List<Limit> limits,
        Map<String, List<Limit>> channels,
        Map<String, List<Limit>> categories)
        implements java.io.Serializable {

    /**
     * Reads a record's value: one JSON object with {@code userId} and {@code version}, the rest
     * optional ({@code null} reads as absent, unknown fields are ignored), bounded as a limit
     * config is.
     *
     * @param keyUserId the userId of the record's key, or null for a record without one
     * @throws MalformedRecordException naming the field and what was wrong
     */
    public static UserPreferences parse(byte[] value, Long keyUserId)
            throws MalformedRecordException {
        ObjectNode o = Json.readObject(value);
        long userId = JsonFields.nonNegativeLong(o, "userId");
        if (keyUserId != null && keyUserId != userId) {
            throw new MalformedRecordException(
                    "userId: " + userId + " is not the record's key " + keyUserId);
        }
        long version = JsonFields.nonNegativeLong(o, "version");
        if (version < 1) {
            throw new MalformedRecordException("version: must be positive, got 0");
        }
        Set<String> optOutChannels = Set.of();
        Set<String> optOutCategories = Set.of();
        JsonNode optOut = JsonFields.optional(o, "optOut");
        if (optOut != null) {
            if (!optOut.isObject()) {
                throw new MalformedRecordException("optOut: expected an object, got " + optOut);
            }
            optOutChannels = names(optOut.get("channels"), "optOut.channels", false);
            optOutCategories = names(optOut.get("categories"), "optOut.categories", true);
        }
        JsonNode paused = JsonFields.optional(o, "pausedUntil");
        return new UserPreferences(
                userId,
                version,
                optOutChannels,
                optOutCategories,
                paused == null ? null : JsonFields.nonNegativeLong(paused, "pausedUntil"),
                LimitLists.list(o.get("limits"), "limits"),
                LimitLists.named(o.get("channels"), "preferences", "channels", "channel"),
                LimitLists.byCategory(o.get("categories"), "preferences", "categories"));
    }

    /**
     * A list of at most 64 channel names (the channel pattern of §2) or categories (any a message
     * may carry: 1..64 code points).
     */
    private static Set<String> names(JsonNode node, String path, boolean categories)
            throws MalformedRecordException {
        if (node == null || node.isNull()) {
            return Set.of();
        }
        if (!node.isArray()) {
            throw new MalformedRecordException(path + ": expected an array of names");
        }
        if (node.size() > LimitLists.MAX_NAMES) {
            throw new MalformedRecordException(
                    path + ": at most " + LimitLists.MAX_NAMES + " names, got " + node.size());
        }
        Set<String> out = new LinkedHashSet<>();
        for (int i = 0; i < node.size(); i++) {
            JsonNode n = node.get(i);
            if (categories && !(n.isTextual() && OutboundMessage.isCategory(n.textValue()))) {
                throw new MalformedRecordException(
                        path
                                + "["
                                + i
                                + "]: expected a category of 1.."
                                + OutboundMessage.MAX_CATEGORY_CHARS
                                + " characters, got "
                                + (n.isTextual()
                                        ? n.textValue().codePointCount(0, n.textValue().length())
                                        : n.getNodeType().toString().toLowerCase()));
            }
            if (!categories
                    && !(n.isTextual()
                            && OutboundMessage.CHANNEL.matcher(n.textValue()).matches())) {
                throw new MalformedRecordException(
                        path + "[" + i + "]: expected a name matching [a-z0-9_-]{1,32}, got " + n);
            }
            out.add(n.textValue());
        }
        return Collections.unmodifiableSet(out);
    }

    /**
     * The longest window of the user's limits (a calendar limit's as it counts for history: 3d, 9d,
     * 33d); 0 without limits. The user's history is kept long enough for it.
     */
    public long longestWindowMillis() {
        long longest = 0;
        for (Limit l : limits) {
            longest = Math.max(longest, l.windowMillis());
        }
        for (List<Limit> list : channels.values()) {
            for (Limit l : list) {
                longest = Math.max(longest, l.windowMillis());
            }
        }
        for (List<Limit> list : categories.values()) {
            for (Limit l : list) {
                longest = Math.max(longest, l.windowMillis());
            }
        }
        return longest;
    }

    /**
     * The longest window a user's history must serve: the config's (rules and shadow rules), or the
     * user's own limits' where longer (contract.md §10: "one email a week" under rules of a day
     * must still see the week).
     *
     * @param prefs the user's preferences, or null
     */
    public static long keptMillis(LimitConfig config, UserPreferences prefs) {
        long kept = config.keptWindowMillis();
        return prefs == null ? kept : Math.max(kept, prefs.longestWindowMillis());
    }

    /** A pause ending at or after this instant (the year 10000) is for good (contract.md §10). */
    public static final long PAUSED_FOR_GOOD = 253_402_300_800_000L;

    /** Whether the user's pause closes instant {@code t}: before its end, or any for good. */
    public boolean pausedAt(long t) {
        return pausedUntil != null && (t < pausedUntil || pausedUntil >= PAUSED_FOR_GOOD);
    }

    /** Whether the user opted out of this message's channel or category. */
    public boolean optsOut(String channel, String category) {
        return optOutChannels.contains(channel) || optOutCategories.contains(category);
    }
}
