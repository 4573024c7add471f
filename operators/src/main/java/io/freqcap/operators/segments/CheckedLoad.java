package io.freqcap.operators.segments;

import io.freqcap.schema.common.MalformedRecordException;
import java.io.IOException;
import java.util.zip.CRC32;

/**
 * Loading a segment file that was checked good before it was broadcast ({@link SegmentCheck}):
 * through the TaskManager's shared copy, retried after {@link #RETRY_DELAYS_MILLIS} if it cannot be
 * read or its CRC-32 differs, and past that failing the task ({@link SegmentUnavailableException})
 * rather than leave it on other segments than the rest.
 */
public final class CheckedLoad {
    private CheckedLoad() {}

    /** How long to wait before each retry of a load checked good upstream. */
    static final long[] RETRY_DELAYS_MILLIS = {250, 1_000, 4_000};

    /** Waits between retries (tests pass one that does not). */
    public interface Sleeper {
        void sleep(long millis) throws InterruptedException;
    }

    /**
     * Acquires a checked segment file's shared copy (the caller releases it), retried after {@link
     * #RETRY_DELAYS_MILLIS}; thread-safe, so a task can load the copy off its own thread.
     *
     * @throws SegmentUnavailableException past the retries
     */
    public static SegmentCache.Loaded acquire(
            SegmentCache.Key key, SegmentLoader loader, long crc32, Sleeper sleeper) {
        Throwable last = null;
        for (int attempt = 0; attempt <= RETRY_DELAYS_MILLIS.length; attempt++) {
            if (attempt > 0) {
                try {
                    sleeper.sleep(RETRY_DELAYS_MILLIS[attempt - 1]);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SegmentUnavailableException("interrupted loading " + key.uri(), e);
                }
            }
            try {
                SegmentCache.Loaded loaded = SegmentCache.acquire(key, loader);
                if (loaded.crc32() == crc32) {
                    return loaded;
                }
                SegmentCache.release(key);
                last =
                        new java.io.IOException(
                                "CRC-32 " + loaded.crc32() + ", checked as " + crc32);
            } catch (IOException | MalformedRecordException | RuntimeException e) {
                last = e;
            }
        }
        throw new SegmentUnavailableException(
                "segment \""
                        + key.segmentId()
                        + "\" version "
                        + key.version()
                        + ": "
                        + key.uri()
                        + " was checked good but this task cannot load it after "
                        + (RETRY_DELAYS_MILLIS.length + 1)
                        + " attempts: "
                        + last.getMessage(),
                last);
    }

    /** The INVALID_CONTROL reason of a file that cannot be read. */
    static String unreadable(String uri, Throwable e) {
        String why = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        return "uri " + uri + " is unreadable: " + why;
    }

    static long crc32(byte[] bytes) {
        CRC32 c = new CRC32();
        c.update(bytes);
        return c.getValue();
    }
}
