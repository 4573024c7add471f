package io.freqcap.job.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Temporary directories of the local runner and the benchmarks: gone when they stop. */
public final class TempDirs {
    private TempDirs() {}

    /**
     * A new temporary directory ({@code <prefix>...}) holding a {@code pid} file with this process'
     * id, so that a later run can tell it was left by a process that no longer lives.
     */
    public static Path createOwned(String prefix) throws IOException {
        Path dir = Files.createTempDirectory(prefix);
        Files.writeString(dir.resolve("pid"), Long.toString(ProcessHandle.current().pid()));
        return dir;
    }

    /**
     * Deletes the temporary directories {@link #createOwned} made for processes that are gone (a
     * run killed with {@code kill -9} cannot delete its own).
     */
    public static void deleteLeftByKilledRuns(String prefix, java.io.PrintStream out) {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        try (Stream<Path> dirs = Files.list(tmp)) {
            for (Path dir : (Iterable<Path>) dirs::iterator) {
                if (!dir.getFileName().toString().startsWith(prefix)) {
                    continue;
                }
                Path pid = dir.resolve("pid");
                long owner;
                try {
                    owner = Long.parseLong(Files.readString(pid).trim());
                } catch (IOException | NumberFormatException e) {
                    // Not ours, or still being made; an empty one a minute old is litter.
                    if (isEmpty(dir)
                            && Files.getLastModifiedTime(dir).toMillis()
                                    < System.currentTimeMillis() - 60_000) {
                        Files.deleteIfExists(dir);
                    }
                    continue;
                }
                if (ProcessHandle.of(owner).map(ProcessHandle::isAlive).orElse(false)) {
                    continue;
                }
                deleteRecursively(dir);
                out.println("Deleted " + dir + ", left by a run that was killed");
            }
        } catch (IOException e) {
            out.println("freqcap: could not look for left-over temporary directories: " + e);
        }
    }

    private static boolean isEmpty(Path dir) throws IOException {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.findAny().isEmpty();
        }
    }

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
