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
    FORGOTTEN,
    /**
     * A held message whose place a message of higher priority took before its send time
     * (contract.md §6).
     */
    PREEMPTED,
    /**
     * A held message withdrawn before its send time: by {@code cancel-held} (contract.md §7), or by
     * its user's preferences.
     */
    CANCELLED;

    /** Whether a record so decided goes to the delivery topic rather than the audit topic. */
    public boolean delivered() {
        return this == ALLOWED || this == EXEMPT;
    }
}
