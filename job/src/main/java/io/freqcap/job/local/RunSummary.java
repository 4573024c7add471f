package io.freqcap.job.local;

import java.util.Map;
import org.apache.flink.api.common.JobStatus;

/**
 * What a run did, for its closing summary.
 *
 * @param finalStatus the job's, or null when the run had none ({@code --no-job})
 */
public record RunSummary(
        long sent,
        Map<String, Long> decisions,
        Map<String, Long> segments,
        long redisKeys,
        JobStatus finalStatus) {

    /**
     * Why the run did not do its job, or null when it did: its job failed, or never decided
     * anything (a job restarting for ever, say), which must not end with exit code 0.
     */
    public String failure() {
        if (finalStatus == null) {
            return null;
        }
        if (finalStatus == JobStatus.FAILED) {
            return "the job failed (its log above says why)";
        }
        long decided = decisions.values().stream().mapToLong(Long::longValue).sum();
        if (decided == 0) {
            return "the job decided nothing: no record reached the delivery or audit topic"
                    + (sent > 0 ? " of the " + sent + " messages sent" : "")
                    + " (its log above says why)";
        }
        return null;
    }
}
