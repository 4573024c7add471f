package io.freqcap.job.testutils;

import io.freqcap.schema.message.RawRecord;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;

/**
 * Fails the job once, in the middle of the input: at the first record after {@code afterRecords}
 * once two checkpoints completed. Test-only; its state is static so the restarted task sees that it
 * already failed, hence {@link #reset()} before each job.
 */
public final class FailOnce extends RichMapFunction<RawRecord, RawRecord>
        implements CheckpointListener {
    public static final AtomicBoolean FAILED = new AtomicBoolean();
    public static final AtomicInteger CHECKPOINTS = new AtomicInteger();
    public static final AtomicInteger SEEN = new AtomicInteger();

    private final int afterRecords;

    public FailOnce(int afterRecords) {
        this.afterRecords = afterRecords;
    }

    public static void reset() {
        FAILED.set(false);
        CHECKPOINTS.set(0);
        SEEN.set(0);
    }

    /**
     * Waits at most {@code millis} until {@code count} checkpoints completed since the last {@link
     * #reset()}; whether they did, a caller to whom it matters checks.
     */
    public static void awaitCheckpoints(int count, long millis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + millis;
        while (CHECKPOINTS.get() < count && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
    }

    @Override
    public RawRecord map(RawRecord r) {
        if (SEEN.incrementAndGet() > afterRecords
                && CHECKPOINTS.get() >= 2
                && FAILED.compareAndSet(false, true)) {
            throw new IllegalStateException("injected failure");
        }
        return r;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        CHECKPOINTS.incrementAndGet();
    }
}
