package io.freqcap.operators.capping;

import java.net.URI;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;

/**
 * {@code faulty://} files: a file-system plugin that is broken the way a plugin with a missing
 * class is, throwing {@link NoClassDefFoundError} on every read (registered for tests through
 * META-INF/services).
 */
public final class FaultyFileSystemFactory implements FileSystemFactory {
    @Override
    public String getScheme() {
        return "faulty";
    }

    @Override
    public FileSystem create(URI fsUri) {
        return new LocalFileSystem() {
            @Override
            public boolean isDistributedFS() {
                return true;
            }

            @Override
            public FileStatus getFileStatus(Path f) {
                throw new NoClassDefFoundError("com/example/s3/Client");
            }

            @Override
            public FSDataInputStream open(Path f) {
                throw new NoClassDefFoundError("com/example/s3/Client");
            }
        };
    }
}
