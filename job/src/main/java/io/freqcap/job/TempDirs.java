package io.freqcap.job;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Temporary directories of the local runner and the benchmarks: gone when they stop. */
public final class TempDirs {
    private TempDirs() {}

    /**
     * Deletes a directory and everything under it; what cannot be deleted (a file still open
     * elsewhere) is left and reported on standard error, never thrown.
     */
    public static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder())
                    .forEach(
                            p -> {
                                try {
                                    Files.deleteIfExists(p);
                                } catch (IOException e) {
                                    // a directory emptied late, or a file still held: leave it
                                }
                            });
        } catch (IOException | java.io.UncheckedIOException e) {
            System.err.println("freqcap: could not delete " + dir + ": " + e.getMessage());
        }
        if (Files.exists(dir)) {
            System.err.println("freqcap: left behind (delete by hand): " + dir);
        }
    }
}
