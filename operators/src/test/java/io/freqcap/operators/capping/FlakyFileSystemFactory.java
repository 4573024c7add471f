package io.freqcap.operators.capping;

import java.io.IOException;
import java.net.URI;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;

/**
 * {@code flaky://} files: local files whose next {@link #FAIL_NEXT} opens fail, the way an object
 * store drops a connection (registered for tests through META-INF/services).
 */
public final class FlakyFileSystemFactory implements FileSystemFactory {
    /** How many of the next opens fail. */
    static final AtomicInteger FAIL_NEXT = new AtomicInteger();

    /** Opens tried so far. */
    static final AtomicInteger OPENS = new AtomicInteger();

    @Override
    public String getScheme() {
        return "flaky";
    }

    @Override
    public FileSystem create(URI fsUri) {
        return new LocalFileSystem() {
            @Override
            public FSDataInputStream open(Path f) throws IOException {
                OPENS.incrementAndGet();
                if (FAIL_NEXT.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    throw new IOException("connection reset by peer");
                }
                return super.open(f);
            }
        };
    }
}
