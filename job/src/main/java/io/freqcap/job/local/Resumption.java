package io.freqcap.job.local;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * How the local runner carries on where the last run stopped: checkpoints go to the state dir, a
 * start resumes from the latest completed one (and says so), and a checkpoint the job cannot use is
 * one clear line instead of a restart loop.
 */
final class Resumption {
    private final Optional<Path> from;

    private Resumption(Optional<Path> from) {
        this.from = from;
    }

    /** Points Flink's checkpoints at the state dir, and its restore at the latest one there. */
    static Resumption prepare(StateDir state, Configuration flink, PrintStream out)
            throws IOException {
        flink.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                state.checkpoints().toAbsolutePath().toUri().toString());
        Optional<Path> from = state.latestCheckpoint();
        if (from.isPresent()) {
            out.println(
                    "Resuming from checkpoint "
                            + from.get().toAbsolutePath()
                            + " (written "
                            + Files.getLastModifiedTime(from.get().resolve("_metadata"))
                            + ")");
            flink.set(
                    StateRecoveryOptions.SAVEPOINT_PATH,
                    from.get().toAbsolutePath().toUri().toString());
            // The runner owns its checkpoints: Flink deletes the one resumed from, and files of
            // older ones, once newer checkpoints no longer need them.
            flink.set(StateRecoveryOptions.RESTORE_MODE, RecoveryClaimMode.CLAIM);
        } else {
            out.println(
                    "No checkpoint in "
                            + state.checkpoints().toAbsolutePath()
                            + ": starting with empty state");
        }
        return new Resumption(from);
    }

    /** Submits the job; a resumed job that fails to start is an {@link InvalidOptionException}. */
    JobClient submit(StreamExecutionEnvironment env, String name) throws Exception {
        try {
            JobClient job = env.executeAsync(name);
            if (from.isPresent()) {
                awaitRestored(job);
            }
            return job;
        } catch (Exception e) {
            if (from.isEmpty()) {
                throw e;
            }
            throw new InvalidOptionException(
                    "--state-dir: cannot resume from "
                            + from.get().toAbsolutePath()
                            + " ("
                            + rootMessage(e)
                            + "); is it a checkpoint of another job or version? Start with another"
                            + " --state-dir, or move this one away to start afresh");
        }
    }

    /**
     * Watches a resumed job's first seconds: a checkpoint Flink cannot map to this job fails it at
     * once; state its tasks cannot read makes them fail on their first start, and the job restart.
     */
    private static void awaitRestored(JobClient job) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (System.nanoTime() < deadline) {
            JobStatus s = job.getJobStatus().get();
            if (s.isGloballyTerminalState()) {
                job.getJobExecutionResult().get(); // throws why it failed
                throw new IllegalStateException("the resumed job ended at once: " + s);
            }
            if (s == JobStatus.RESTARTING || s == JobStatus.FAILING) {
                job.cancel().get(30, TimeUnit.SECONDS);
                throw new IllegalStateException("the resumed job's tasks failed to start");
            }
            Thread.sleep(200);
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        String message = String.valueOf(e.getMessage());
        while (t != null) {
            if (t.getMessage() != null) {
                message = t.getMessage();
            }
            t = t.getCause();
        }
        return message.length() > 300 ? message.substring(0, 300) + "..." : message;
    }
}
