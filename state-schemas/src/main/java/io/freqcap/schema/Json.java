package io.freqcap.schema;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;

/** Shared, thread-safe Jackson objects configured the way the contract reads JSON. */
public final class Json {
    /** Duplicate keys make a record ambiguous, so they make it malformed. */
    public static final JsonFactory FACTORY =
            JsonFactory.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    /** Reads whole documents: anything after the first value makes the record malformed. */
    public static final ObjectMapper MAPPER =
            new ObjectMapper(FACTORY).enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private Json() {}

    /**
     * Describes the current token for an error message: {@code "abc"}, {@code 42.0}, {@code null}.
     */
    static String describe(JsonParser p) throws IOException {
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
