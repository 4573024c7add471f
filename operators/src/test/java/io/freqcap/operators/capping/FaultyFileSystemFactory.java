package io.freqcap.operators.capping;

/**
 * {@code faulty://} files: a file-system plugin that is broken the way a plugin with a missing
 * class is, throwing {@link NoClassDefFoundError} on every read (registered for tests through
 * META-INF/services).
 */
public final class FaultyFileSystemFactory extends LocalFileSystemPlugin {
    public FaultyFileSystemFactory() {
        super("faulty", true);
    }

    @Override
    void beforeStatus() {
        throw new NoClassDefFoundError("com/example/s3/Client");
    }

    @Override
    void beforeOpen() {
        throw new NoClassDefFoundError("com/example/s3/Client");
    }
}
