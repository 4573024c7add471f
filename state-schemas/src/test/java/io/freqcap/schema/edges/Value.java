package io.freqcap.schema.edges;

/**
 * A JSON value as text, and what the contract says of it where it is put.
 *
 * @param json the value's JSON text; null for a field left out
 * @param why the path of the part that makes it invalid or unsettled, when known; else null
 */
public record Value(String json, Validity validity, String why) {
    Value(String json, Validity validity) {
        this(json, validity, null);
    }

    static Value valid(String json) {
        return new Value(json, Validity.VALID);
    }

    static Value invalid(String json) {
        return new Value(json, Validity.INVALID);
    }

    static Value unsettled(String json) {
        return new Value(json, Validity.UNSETTLED);
    }

    /** A field left out, where the contract allows that. */
    static final Value ABSENT = valid(null);

    /** A required field left out. */
    static final Value MISSING = invalid(null);

    boolean absent() {
        return json == null;
    }
}
