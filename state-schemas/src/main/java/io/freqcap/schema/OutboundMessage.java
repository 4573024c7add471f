package io.freqcap.schema;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.regex.Pattern;

/**
 * The fields of an outbound message (contract.md §2) that capping reads. Everything else in the
 * record travels as its original bytes and is never re-serialized.
 *
 * @param category the category, {@code marketing} when the record has none
 */
public record OutboundMessage(
        String messageId, long userId, String channel, String category, long timestamp) {

    public static final String DEFAULT_CATEGORY = "marketing";
    public static final Pattern CHANNEL = Pattern.compile("[a-z0-9_-]{1,32}");
    static final int MAX_MESSAGE_ID_CHARS = 128;

    /**
     * Reads one record value.
     *
     * @throws MalformedRecordException naming the field and what was wrong, for any value that is
     *     not exactly one JSON object with the required fields of the right types and ranges
     */
    public static OutboundMessage parse(byte[] value) throws MalformedRecordException {
        if (value == null) {
            throw new MalformedRecordException("record has no value (tombstone)");
        }
        String messageId = null;
        String channel = null;
        String category = DEFAULT_CATEGORY;
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
                switch (field) {
                    case "messageId":
                        messageId = string(p, field);
                        int n = messageId.codePointCount(0, messageId.length());
                        if (n < 1 || n > MAX_MESSAGE_ID_CHARS) {
                            throw new MalformedRecordException(
                                    "messageId: must be 1.."
                                            + MAX_MESSAGE_ID_CHARS
                                            + " characters, got "
                                            + n);
                        }
                        break;
                    case "userId":
                        userId = nonNegativeLong(p, field);
                        break;
                    case "channel":
                        channel = string(p, field);
                        if (!isChannelName(channel)) {
                            throw new MalformedRecordException(
                                    "channel: must match [a-z0-9_-]{1,32}, got "
                                            + Json.describe(p));
                        }
                        break;
                    case "category":
                        if (p.currentToken() != JsonToken.VALUE_NULL) {
                            category = string(p, field);
                        }
                        break;
                    case "timestamp":
                        timestamp = nonNegativeLong(p, field);
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
        return new OutboundMessage(messageId, userId, channel, category, timestamp);
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
