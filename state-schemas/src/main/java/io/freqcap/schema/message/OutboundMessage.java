package io.freqcap.schema.message;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;
import java.io.IOException;
import java.time.ZoneId;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The fields of an outbound message (contract.md §2) that capping reads. Everything else in the
 * record travels as its original bytes and is never re-serialized.
 *
 * @param category the category, {@code marketing} when the record has none
 * @param timezone the user's IANA time-zone region id, one the JVM knows; null when the record has
 *     none (the config's zone applies)
 * @param campaignId the campaign, an integer taken as its decimal text; null when none
 * @param priority 0..100, higher more important (contract.md §2): it may use reserved places and
 *     take a held message's place (§3, §6); 0 when the record has none
 */
public record OutboundMessage(
        String messageId,
        long userId,
        String channel,
        String category,
        long timestamp,
        String timezone,
        String campaignId,
        int priority) {

    /** A message without time zone or campaign, of priority 0. */
    public OutboundMessage(
            String messageId, long userId, String channel, String category, long timestamp) {
        this(messageId, userId, channel, category, timestamp, null, null, 0);
    }

    /** The same message at another time: a held message is counted at its send time. */
    public OutboundMessage at(long sendAt) {
        return new OutboundMessage(
                messageId, userId, channel, category, sendAt, timezone, campaignId, priority);
    }

    /** 0:00 UTC on 1 January 10000: a message stamped at or after it is MALFORMED. */
    public static final long LAST_YEAR_END = 253_402_300_800_000L;

    /** The highest priority (contract.md §2). */
    public static final int MAX_PRIORITY = 100;

    /** The region ids {@code java.time} knows (the tz database the JVM carries), read once. */
    private static final Set<String> ZONES = Set.copyOf(ZoneId.getAvailableZoneIds());

    public static final int MAX_CAMPAIGN_ID_CHARS = 128;

    /** Whether {@code id} is an IANA time-zone region id this JVM knows. */
    public static boolean isKnownZone(String id) {
        return ZONES.contains(id);
    }

    public static final String DEFAULT_CATEGORY = "marketing";
    public static final Pattern CHANNEL = Pattern.compile("[a-z0-9_-]{1,32}");
    public static final int MAX_MESSAGE_ID_CHARS = 128;

    /** Categories are kept with every counted entry: bounded, so no message can bloat state. */
    public static final int MAX_CATEGORY_CHARS = 64;

    /**
     * Reads one record value.
     *
     * @throws MalformedRecordException naming the field and what was wrong, for any value that is
     *     not exactly one JSON object with the required fields of the right types and ranges
     */
    public static OutboundMessage parse(byte[] value) throws MalformedRecordException {
        return parse(value, false);
    }

    /**
     * Reads a value decided already, by this version or an earlier one whose reader was less strict
     * (freqcap 0.3 held {@code "priority": "high"}, an unknown field then): a field this version
     * would refuse reads as absent (priority 0, category {@code marketing}, no zone, no campaign)
     * instead. Null when even that leaves a required field missing.
     */
    public static OutboundMessage parseDecided(byte[] value) {
        try {
            return parse(value, true);
        } catch (MalformedRecordException e) {
            return null;
        }
    }

    private static OutboundMessage parse(byte[] value, boolean lenient)
            throws MalformedRecordException {
        if (value == null) {
            throw new MalformedRecordException("record has no value (tombstone)");
        }
        if (!lenient && !looksUtf8(value)) {
            // The JSON reader would take UTF-16 or UTF-32 too; audit records embed the value as
            // UTF-8 JSON text, and the contract's records are UTF-8 (RFC 8259 §8.1).
            throw new MalformedRecordException("not UTF-8: a UTF-16 or UTF-32 value");
        }
        String messageId = null;
        String channel = null;
        String category = DEFAULT_CATEGORY;
        String timezone = null;
        String campaignId = null;
        int priority = 0;
        long userId = -1;
        long timestamp = -1;
        try (JsonParser p = Json.FACTORY.createParser(value)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new MalformedRecordException(
                        "expected a JSON object, got " + Json.describe(p));
            }
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                p.nextToken();
                if (lenient) {
                    try {
                        switch (field) {
                            case "messageId" -> messageId = string(p, field);
                            case "category" -> category = orDefault(string(p, field));
                            case "timezone" -> timezone = knownOrNull(p);
                            case "campaignId" -> campaignId = campaignId(p);
                            case "priority" -> priority = priority(p);
                            case "userId" -> userId = nonNegativeLong(p, field);
                            case "channel" -> channel = string(p, field);
                            case "timestamp" -> timestamp = nonNegativeLong(p, field);
                            default -> p.skipChildren();
                        }
                    } catch (MalformedRecordException e) {
                        p.skipChildren(); // read as absent
                    }
                    continue;
                }
                switch (field) {
                    case "messageId":
                        messageId = chars(string(p, field), field, MAX_MESSAGE_ID_CHARS);
                        break;
                    case "userId":
                        userId = nonNegativeLong(p, field);
                        break;
                    case "channel":
                        channel = channel(p);
                        break;
                    case "category":
                        if (p.currentToken() != JsonToken.VALUE_NULL) {
                            category = chars(string(p, field), field, MAX_CATEGORY_CHARS);
                        }
                        break;
                    case "timestamp":
                        timestamp = nonNegativeLong(p, field);
                        break;
                    case "timezone":
                        if (p.currentToken() != JsonToken.VALUE_NULL) {
                            timezone = timezone(p);
                        }
                        break;
                    case "campaignId":
                        campaignId = campaignId(p);
                        break;
                    case "priority":
                        priority = priority(p);
                        break;
                    default:
                        p.skipChildren();
                }
            }
            if (t != JsonToken.END_OBJECT) {
                throw new MalformedRecordException("unexpected " + Json.describe(p));
            }
            if (p.nextToken() != null) {
                throw new MalformedRecordException("trailing bytes after the JSON object");
            }
        } catch (JsonParseException e) {
            throw new MalformedRecordException("not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new MalformedRecordException("unreadable: " + e.getMessage());
        }
        require(messageId != null, "messageId");
        require(userId >= 0, "userId");
        require(channel != null, "channel");
        require(timestamp >= 0, "timestamp");
        return new OutboundMessage(
                messageId, userId, channel, category, timestamp, timezone, campaignId, priority);
    }

    private static String orDefault(String category) {
        return category == null || category.isEmpty() ? DEFAULT_CATEGORY : category;
    }

    private static String knownOrNull(JsonParser p) throws IOException {
        if (p.currentToken() != JsonToken.VALUE_STRING) {
            p.skipChildren();
            return null;
        }
        String zone = p.getText();
        return isKnownZone(zone) ? zone : null;
    }

    /**
     * The priority a value read by a version without priorities carries: its own where it is valid
     * (and the value one message), else 0. Never throws: the value was decided already.
     */
    public static int priorityIn(byte[] value) {
        OutboundMessage m = parseDecided(value);
        return m == null ? 0 : m.priority();
    }

    /** A JSON integer 0..100, or null (0). */
    private static int priority(JsonParser p) throws IOException, MalformedRecordException {
        if (p.currentToken() == JsonToken.VALUE_NULL) {
            return 0;
        }
        if (p.currentToken() != JsonToken.VALUE_NUMBER_INT
                || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
                || p.getLongValue() < 0
                || p.getLongValue() > MAX_PRIORITY) {
            throw new MalformedRecordException(
                    "priority: expected an integer 0.."
                            + MAX_PRIORITY
                            + ", got "
                            + Json.describe(p));
        }
        return p.getIntValue();
    }

    /**
     * False for a value in UTF-16 or UTF-32: a NUL among its first bytes, or a UTF-16 byte order
     * mark (no JSON text in UTF-8 starts with either).
     */
    private static boolean looksUtf8(byte[] v) {
        int n = Math.min(v.length, 4);
        for (int i = 0; i < n; i++) {
            if (v[i] == 0) {
                return false;
            }
        }
        return !(v.length >= 2
                && ((v[0] & 0xff) == 0xfe && (v[1] & 0xff) == 0xff
                        || (v[0] & 0xff) == 0xff && (v[1] & 0xff) == 0xfe));
    }

    /** Whether {@code v} is a category a message may carry: 1..64 characters (code points). */
    public static boolean isCategory(String v) {
        int n = v.codePointCount(0, v.length());
        return n >= 1 && n <= MAX_CATEGORY_CHARS && isWellFormed(v);
    }

    /**
     * {@code v}, checked to be 1..max characters (code points) long and well-formed: a JSON escape
     * of half a surrogate pair ({@code "\ud800"}) names no character, and no output could carry it
     * as it came.
     */
    private static String chars(String v, String field, int max) throws MalformedRecordException {
        int n = v.codePointCount(0, v.length());
        if (n < 1 || n > max) {
            throw new MalformedRecordException(
                    field + ": must be 1.." + max + " characters, got " + n);
        }
        if (!isWellFormed(v)) {
            throw new MalformedRecordException(field + ": half a surrogate pair is no character");
        }
        return v;
    }

    /** Whether {@code v} has no unpaired surrogate (it is Unicode text, as UTF-8 can carry it). */
    public static boolean isWellFormed(String v) {
        return io.freqcap.schema.common.JsonFields.isWellFormed(v);
    }

    private static String channel(JsonParser p) throws IOException, MalformedRecordException {
        String channel = string(p, "channel");
        if (!isChannelName(channel)) {
            throw new MalformedRecordException(
                    "channel: must match [a-z0-9_-]{1,32}, got " + Json.describe(p));
        }
        return channel;
    }

    private static String timezone(JsonParser p) throws IOException, MalformedRecordException {
        String timezone = string(p, "timezone");
        if (!isKnownZone(timezone)) {
            throw new MalformedRecordException(
                    "timezone: not a time-zone id this job knows, got " + Json.describe(p));
        }
        return timezone;
    }

    /** A string of 1..128 characters, an integer as its decimal text, or null (none). */
    private static String campaignId(JsonParser p) throws IOException, MalformedRecordException {
        switch (p.currentToken()) {
            case VALUE_NULL:
                return null;
            case VALUE_NUMBER_INT:
                return chars(
                        p.getBigIntegerValue().toString(), "campaignId", MAX_CAMPAIGN_ID_CHARS);
            case VALUE_STRING:
                return chars(p.getText(), "campaignId", MAX_CAMPAIGN_ID_CHARS);
            default:
                throw new MalformedRecordException(
                        "campaignId: expected a string or an integer, got " + Json.describe(p));
        }
    }

    /** {@link #CHANNEL} without a regex engine: a hand loop costs a tenth as much per message. */
    static boolean isChannelName(String s) {
        int n = s.length();
        if (n < 1 || n > 32) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    private static void require(boolean present, String field) throws MalformedRecordException {
        if (!present) {
            throw new MalformedRecordException(field + ": required field is missing");
        }
    }

    private static String string(JsonParser p, String field)
            throws IOException, MalformedRecordException {
        if (p.currentToken() != JsonToken.VALUE_STRING) {
            throw new MalformedRecordException(
                    field + ": expected a string, got " + Json.describe(p));
        }
        return p.getText();
    }

    private static long nonNegativeLong(JsonParser p, String field)
            throws IOException, MalformedRecordException {
        if (p.currentToken() != JsonToken.VALUE_NUMBER_INT) {
            throw new MalformedRecordException(
                    field + ": expected an integer, got " + Json.describe(p));
        }
        if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            throw new MalformedRecordException(
                    field + ": out of range 0..2^63-1, got " + p.getText());
        }
        long v = p.getLongValue();
        if (v < 0) {
            throw new MalformedRecordException(field + ": must not be negative, got " + v);
        }
        return v;
    }
}
