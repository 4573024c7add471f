package io.freqcap.operators.segments;

/**
 * A segment file checked good before it was broadcast cannot be loaded by this task, even after
 * retries. Unlike a bad control record, this must fail the task: Flink then restarts it from the
 * last checkpoint (the failure shows in the web UI's exceptions), and it reads the update again,
 * instead of deciding on other segments than the other tasks.
 */
public final class SegmentUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SegmentUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
