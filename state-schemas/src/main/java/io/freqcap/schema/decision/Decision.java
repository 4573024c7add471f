package io.freqcap.schema.decision;

/** The outcome for one input record (contract.md §5). */
public enum Decision {
    ALLOWED,
    EXEMPT,
    REJECTED,
    DUPLICATE,
    STALE,
    MALFORMED,
    INVALID_CONTROL,
    /** A held message whose user was erased ({@code forget-user}) before its send time. */
    FORGOTTEN
}
