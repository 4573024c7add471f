package io.freqcap.schema.common;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/** Shared, thread-safe Jackson objects configured the way the contract reads JSON. */
public final class Json {
    /** Duplicate keys make a record ambiguous, so they make it malformed. */
    public static final JsonFactory FACTORY =
            JsonFactory.builder()
                    .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                    // An astral character is 4 bytes of UTF-8, not a 12-byte pair of escapes:
                    // records of ids at their bounds stay within --max-record-bytes.
                    .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
                    .build();

    /** Reads whole documents: anything after the first value makes the record malformed. */
    public static final ObjectMapper MAPPER =
            new ObjectMapper(FACTORY).enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    /**
     * As {@link #MAPPER}, with numbers that have a fraction or an exponent read as exact decimals:
     * a limit config's {@code fatigue.scale} has at most two decimals (contract.md §3), which a
     * double cannot tell ({@code 0.99000000000000000001} is 0.99 as a double).
     */
    public static final ObjectMapper EXACT_MAPPER =
            new ObjectMapper(FACTORY)
                    .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                    .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

    private Json() {}

    /** One JSON object, or why the value is not one. */
    public static ObjectNode readObject(byte[] value) throws MalformedRecordException {
        return readObject(value, MAPPER);
    }

    /** The same, its decimals exact ({@link #EXACT_MAPPER}): a limit config or a command. */
    public static ObjectNode readExactObject(byte[] value) throws MalformedRecordException {
        return readObject(value, EXACT_MAPPER);
    }

    private static ObjectNode readObject(byte[] value, ObjectMapper mapper)
            throws MalformedRecordException {
        if (value == null) {
            throw new MalformedRecordException("record has no value (tombstone)");
        }
        JsonNode root;
        try {
            root = mapper.readTree(value);
        } catch (IOException e) {
            throw new MalformedRecordException("not valid JSON: " + firstLine(e.getMessage()));
        }
        if (!(root instanceof ObjectNode)) {
            throw new MalformedRecordException("expected a JSON object");
        }
        return (ObjectNode) root;
    }

    private static String firstLine(String s) {
        int nl = s == null ? -1 : s.indexOf('\n');
        return nl < 0 ? String.valueOf(s) : s.substring(0, nl);
    }

    /**
     * Describes the current token for an error message: {@code "abc"}, {@code 42.0}, {@code null}.
     */
    public static String describe(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        if (t == null) {
            return "nothing";
        }
        switch (t) {
            case VALUE_STRING:
                String s = p.getText();
                return '"' + (s.length() > 40 ? s.substring(0, 40) + "..." : s) + '"';
            case START_OBJECT:
                return "an object";
            case START_ARRAY:
                return "an array";
            default:
                return p.getText();
        }
    }
}
