package io.freqcap.schema.common;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The fields of a record read as a tree (control records, preferences, receipts), each checked as
 * contract.md §2 checks a message's: an error names the field and what was wrong.
 */
public final class JsonFields {
    private JsonFields() {}

    /** The field, or null where it is absent or JSON {@code null} (which reads as absent). */
    public static JsonNode optional(ObjectNode o, String field) {
        JsonNode v = o.get(field);
        return v == null || v.isNull() ? null : v;
    }

    /** A required string of 1..max characters (code points). */
    public static String string(ObjectNode o, String field, int max)
            throws MalformedRecordException {
        JsonNode v = optional(o, field);
        if (v == null) {
            throw new MalformedRecordException(field + ": required field is missing");
        }
        if (!v.isTextual()) {
            throw new MalformedRecordException(field + ": expected a string, got " + v);
        }
        int n = v.textValue().codePointCount(0, v.textValue().length());
        if (n < 1 || n > max) {
            throw new MalformedRecordException(
                    field + ": must be 1.." + max + " characters, got " + n);
        }
        if (!isWellFormed(v.textValue())) {
            throw new MalformedRecordException(field + ": half a surrogate pair is no character");
        }
        return v.textValue();
    }

    /**
     * Whether {@code v} has no unpaired surrogate: a JSON escape of half a pair ({@code "\ud800"})
     * names no character, and no output could carry it as it came.
     */
    public static boolean isWellFormed(String v) {
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (Character.isHighSurrogate(c)
                    && i + 1 < v.length()
                    && Character.isLowSurrogate(v.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    /** A required integer 0..2^63-1. */
    public static long nonNegativeLong(ObjectNode o, String field) throws MalformedRecordException {
        JsonNode v = optional(o, field);
        if (v == null) {
            throw new MalformedRecordException(field + ": required field is missing");
        }
        return nonNegativeLong(v, field);
    }

    /** An integer 0..2^63-1. */
    public static long nonNegativeLong(JsonNode v, String field) throws MalformedRecordException {
        if (!v.isIntegralNumber()) {
            throw new MalformedRecordException(field + ": expected an integer, got " + v);
        }
        if (!v.canConvertToLong() || v.longValue() < 0) {
            throw new MalformedRecordException(field + ": out of range 0..2^63-1, got " + v);
        }
        return v.longValue();
    }
}
