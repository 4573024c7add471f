package io.freqcap.operators.capping;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code flaky://} files: local files whose next {@link #FAIL_NEXT} opens fail, the way an object
 * store drops a connection (registered for tests through META-INF/services).
 */
public final class FlakyFileSystemFactory extends LocalFileSystemPlugin {
    /** How many of the next opens fail. */
    static final AtomicInteger FAIL_NEXT = new AtomicInteger();

    /** Opens tried so far. */
    static final AtomicInteger OPENS = new AtomicInteger();

    public FlakyFileSystemFactory() {
        super("flaky", false);
    }

    @Override
    void beforeOpen() throws IOException {
        OPENS.incrementAndGet();
        if (FAIL_NEXT.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new IOException("connection reset by peer");
        }
    }
}
