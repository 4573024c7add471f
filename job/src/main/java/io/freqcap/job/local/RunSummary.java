package io.freqcap.job.local;

import java.util.Map;
import org.apache.flink.api.common.JobStatus;

/**
 * What a run did, for its closing summary: every message sent is decided (read back from the output
 * topics), still waiting for its send time (live on the held topic), or was in flight when the job
 * stopped (decided after its last checkpoint, so never committed; decided again when the runner
 * resumes).
 *
 * @param waiting messages held for a later send time when the job stopped (the held topic's live
 *     keys), or -1 when not known (no held topic)
 * @param finalStatus the job's, or null when the run had none ({@code --no-job})
 */
public record RunSummary(
        long sent,
        Map<String, Long> decisions,
        Map<String, Long> segments,
        long redisKeys,
        long waiting,
        JobStatus finalStatus) {

    /** Messages decided: one output each. */
    public long decided() {
        return decisions.values().stream().mapToLong(Long::longValue).sum();
    }

    /**
     * The closing line: "sent 124,698: decided 111,174 (ALLOWED ...), waiting 13,524, in flight 0".
     */
    public String line() {
        StringBuilder b = new StringBuilder("RunSummary: sent ");
        b.append(String.format("%,d", sent));
        b.append(String.format(": decided %,d %s", decided(), decisions));
        if (waiting >= 0) {
            b.append(String.format(", still waiting for their send time %,d", waiting));
            if (sent >= 0) {
                b.append(
                        String.format(
                                ", in flight when the job stopped %,d",
                                Math.max(0, sent - decided() - waiting)));
            }
        }
        b.append("; deliveries by segment ").append(segments).append(';');
        if (redisKeys >= 0) {
            b.append(" Redis mirror keys ").append(redisKeys).append(';');
        }
        return b.append(" job ").append(finalStatus).toString();
    }

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
