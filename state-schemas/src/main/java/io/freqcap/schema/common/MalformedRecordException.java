package io.freqcap.schema.common;

/**
 * A record that cannot be read as the contract says. The message names the field and what was wrong
 * with it; it becomes the {@code error} of a MALFORMED or INVALID_CONTROL audit record.
 */
public final class MalformedRecordException extends Exception {
    private static final long serialVersionUID = 1L;

    public MalformedRecordException(String message) {
        super(message);
    }

    /** Stack traces are never looked at for bad input; skipping them keeps bad input cheap. */
    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
