package io.freqcap.operators.capping;

import java.io.IOException;
import java.net.URI;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;

/**
 * Local files under a scheme of a test's own, as a file-system plugin (registered through
 * META-INF/services): a subclass breaks them the way a real plugin or store fails, before a file's
 * status is read or a file is opened.
 */
abstract class LocalFileSystemPlugin implements FileSystemFactory {
    private final String scheme;
    private final boolean distributedFs;

    LocalFileSystemPlugin(String scheme, boolean distributed) {
        this.scheme = scheme;
        this.distributedFs = distributed;
    }

    /** Before a file's status is read: throws to fail the read. */
    void beforeStatus() {}

    /** Before a file is opened: throws to fail the open. */
    abstract void beforeOpen() throws IOException;

    @Override
    public final String getScheme() {
        return scheme;
    }

    @Override
    public final FileSystem create(URI fsUri) {
        return new LocalFileSystem() {
            @Override
            public boolean isDistributedFS() {
                return distributedFs;
            }

            @Override
            public FileStatus getFileStatus(Path f) throws IOException {
                beforeStatus();
                return super.getFileStatus(f);
            }

            @Override
            public FSDataInputStream open(Path f) throws IOException {
                beforeOpen();
                return super.open(f);
            }
        };
    }
}
