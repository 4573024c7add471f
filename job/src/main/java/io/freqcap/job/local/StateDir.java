package io.freqcap.job.local;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The local runner's {@code --state-dir}: its checkpoints (kept when it stops or crashes), and in
 * embedded mode its Kafka broker's and Redis' data, so that a runner started again with the same
 * directory resumes where the last one stopped. One runner at a time: a lock file says so.
 *
 * <p>Layout: {@code checkpoints/<job id>/chk-<n>/_metadata} (Flink's), {@code kafka/}, {@code
 * redis/}, {@code lock}. A resumed job checkpoints under its own job id and claims the checkpoint
 * it resumed from (Flink's claim mode), so Flink deletes it, and the older files its incremental
 * checkpoints no longer need, as newer checkpoints complete.
 */
public final class StateDir implements AutoCloseable {
    private final Path dir;
    private final FileChannel lockChannel;
    private final FileLock lock;

    private StateDir(Path dir, FileChannel lockChannel, FileLock lock) {
        this.dir = dir;
        this.lockChannel = lockChannel;
        this.lock = lock;
    }

    /** Creates or opens the directory and locks it for this runner. */
    public static StateDir open(Path dir) throws InvalidOptionException, IOException {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new InvalidOptionException("--state-dir: cannot create " + dir + ": " + e);
        }
        FileChannel channel =
                FileChannel.open(
                        dir.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            channel.close();
            throw new InvalidOptionException(
                    "--state-dir: "
                            + dir.toAbsolutePath()
                            + " is in use by another freqcap runner; stop it first or give"
                            + " another --state-dir");
        }
        return new StateDir(dir, channel, lock);
    }

    Path path() {
        return dir;
    }

    Path checkpoints() {
        return dir.resolve("checkpoints");
    }

    /** The most recent completed checkpoint (its directory), if any. */
    Optional<Path> latestCheckpoint() throws IOException {
        return latest(completedCheckpoints());
    }

    /** Every completed checkpoint: a {@code chk-*} directory holding {@code _metadata}. */
    public List<Path> completedCheckpoints() throws IOException {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(checkpoints())) {
            return out;
        }
        try (DirectoryStream<Path> jobs = Files.newDirectoryStream(checkpoints())) {
            for (Path job : jobs) {
                if (!Files.isDirectory(job)) {
                    continue;
                }
                try (DirectoryStream<Path> chks = Files.newDirectoryStream(job, "chk-*")) {
                    for (Path chk : chks) {
                        if (Files.isRegularFile(chk.resolve("_metadata"))) {
                            out.add(chk);
                        }
                    }
                }
            }
        }
        return out;
    }

    private static Optional<Path> latest(List<Path> checkpoints) throws IOException {
        Path best = null;
        FileTime bestTime = null;
        for (Path chk : checkpoints) {
            FileTime t = Files.getLastModifiedTime(chk.resolve("_metadata"));
            if (bestTime == null || t.compareTo(bestTime) > 0) {
                best = chk;
                bestTime = t;
            }
        }
        return Optional.ofNullable(best);
    }

    @Override
    public void close() throws IOException {
        lock.release();
        lockChannel.close();
    }
}
