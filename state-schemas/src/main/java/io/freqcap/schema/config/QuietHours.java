package io.freqcap.schema.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.message.OutboundMessage;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A rule's quiet hours (contract.md §3): local times of day, in the message's zone, during which no
 * message of the listed channels is sent. {@code from} later than {@code to} spans midnight.
 *
 * <p>A local time t is quiet when it lies in [from, to) (or, spanning midnight, at or after from or
 * before to). Local times are read on the wall clock: where DST repeats an hour, a time of it is
 * quiet or not on both passes; where DST skips an hour, the quiet hours end at the first instant
 * after the gap when {@code to} lies in it.
 *
 * @param from {@code HH:MM} as given
 * @param to {@code HH:MM} as given
 * @param fromMinute minutes after local midnight
 * @param toMinute minutes after local midnight
 * @param channels the channels they apply to; empty for every channel
 */
public record QuietHours(String from, String to, int fromMinute, int toMinute, Set<String> channels)
        implements java.io.Serializable {

    private static final Pattern HH_MM = Pattern.compile("([01][0-9]|2[0-3]):([0-5][0-9])");
    private static final long MINUTE_MILLIS = 60_000L;

    /** Whether the quiet hours hold back messages of {@code channel}. */
    public boolean appliesTo(String channel) {
        return channels.isEmpty() || channels.contains(channel);
    }

    /** Whether a local time, in milliseconds after local midnight, is quiet. */
    public boolean isQuiet(long millisOfDay) {
        long from = fromMinute * MINUTE_MILLIS;
        long to = toMinute * MINUTE_MILLIS;
        return from < to
                ? millisOfDay >= from && millisOfDay < to
                : millisOfDay >= from || millisOfDay < to;
    }

    /** Reads and validates {@code {"from": "21:00", "to": "08:00", "channels": [...]}}. */
    static QuietHours parse(JsonNode node, String path) throws MalformedRecordException {
        if (!node.isObject()) {
            throw new MalformedRecordException(path + ": expected an object with from and to");
        }
        int from = minute(node.get("from"), path + ".from");
        int to = minute(node.get("to"), path + ".to");
        if (from == to) {
            throw new MalformedRecordException(
                    path + ": from and to are the same time; quiet hours need a span");
        }
        Set<String> channels = new LinkedHashSet<>();
        JsonNode ch = node.get("channels");
        if (ch != null && !ch.isNull()) {
            if (!ch.isArray() || ch.isEmpty()) {
                throw new MalformedRecordException(
                        path + ".channels: expected a non-empty array of channel names");
            }
            if (ch.size() > LimitConfig.MAX_NAMED_LISTS) {
                throw new MalformedRecordException(
                        path
                                + ".channels: at most "
                                + LimitConfig.MAX_NAMED_LISTS
                                + " channels, got "
                                + ch.size());
            }
            for (JsonNode c : ch) {
                if (!c.isTextual() || !OutboundMessage.CHANNEL.matcher(c.textValue()).matches()) {
                    throw new MalformedRecordException(
                            path + ".channels: " + c + " does not match [a-z0-9_-]{1,32}");
                }
                channels.add(c.textValue());
            }
        }
        return new QuietHours(
                node.get("from").textValue(),
                node.get("to").textValue(),
                from,
                to,
                Collections.unmodifiableSet(channels));
    }

    private static int minute(JsonNode node, String path) throws MalformedRecordException {
        Matcher m = node != null && node.isTextual() ? HH_MM.matcher(node.textValue()) : null;
        if (m == null || !m.matches()) {
            throw new MalformedRecordException(
                    path + ": expected a local time HH:MM (00:00 to 23:59), got " + node);
        }
        return Integer.parseInt(m.group(1)) * 60 + Integer.parseInt(m.group(2));
    }
}
