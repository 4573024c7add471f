package io.freqcap.job.local;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.apache.flink.api.common.JobStatus;
import org.junit.jupiter.api.Test;

/**
 * The local runner's exit: a job that failed, or that never decided anything (a job restarting for
 * ever on a Kafka that refuses its transactions, say), must not end with exit code 0.
 */
class RunnerSummaryTest {
    static RunSummary summary(long sent, Map<String, Long> decisions, JobStatus status) {
        return new RunSummary(sent, decisions, Map.of(), -1, -1, status);
    }

    @Test
    void aRunThatDecidedIsFine() {
        assertNull(
                summary(10, Map.of("ALLOWED", 7L, "REJECTED", 3L), JobStatus.CANCELED).failure());
        assertNull(summary(-1, Map.of(), null).failure(), "--no-job: no job to judge");
    }

    @Test
    void aFailedJobOrOneThatDecidedNothingIsAFailure() {
        assertTrue(
                summary(10, Map.of("ALLOWED", 7L), JobStatus.FAILED)
                        .failure()
                        .startsWith("the job failed"));
        String nothing = summary(1_200, Map.of(), JobStatus.CANCELED).failure();
        assertTrue(nothing.startsWith("the job decided nothing"), nothing);
        assertTrue(nothing.contains("of the 1200 messages sent"), nothing);
        assertTrue(
                summary(0, Map.of("ALLOWED", 0L), JobStatus.RESTARTING)
                        .failure()
                        .startsWith("the job decided nothing"));
    }
}
