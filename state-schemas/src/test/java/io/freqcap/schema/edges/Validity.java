package io.freqcap.schema.edges;

/**
 * What the contract says of a generated value or record: it must be accepted, it must be refused
 * (MALFORMED, INVALID_CONTROL), or the contract does not settle it (then no test asserts either
 * way: a duplicate key, a lone surrogate, a number with 200 digits where "an integer" is asked).
 */
public enum Validity {
    VALID,
    INVALID,
    UNSETTLED;

    /** Of a record made of parts: refused if one part must be, unsettled if one part is. */
    public Validity and(Validity other) {
        if (this == INVALID || other == INVALID) {
            return INVALID;
        }
        return this == UNSETTLED || other == UNSETTLED ? UNSETTLED : VALID;
    }
}
