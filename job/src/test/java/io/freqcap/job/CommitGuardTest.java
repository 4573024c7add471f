package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.junit.jupiter.api.Test;

/**
 * A commit Kafka refuses (its transaction aborted after an outage longer than the timeout) stops
 * the job for good, naming the checkpoint, and counts; commits that succeed or are retried pass as
 * they are. The connector's committer is replaced by one that answers as Kafka did.
 */
class CommitGuardTest {
    /** What the connector's committer does with each request, by transactional id. */
    record Answering(List<String> log) implements Committer<String> {
        @Override
        public void commit(java.util.Collection<CommitRequest<String>> requests) {
            for (CommitRequest<String> r : requests) {
                String id = r.getCommittable();
                log.add(id);
                if (id.endsWith("-41")) {
                    r.retryLater(); // Kafka not there yet: tried again, nothing lost
                } else if (id.endsWith("-42")) {
                    r.signalFailedWithKnownReason(
                            new InvalidTxnStateException("transaction aborted by the broker"));
                }
            }
        }

        @Override
        public void close() {}
    }

    /** A request as Flink's committer operator hands it over. */
    static final class Request implements Committer.CommitRequest<String> {
        final String id;
        String outcome = "committed";

        Request(String id) {
            this.id = id;
        }

        @Override
        public String getCommittable() {
            return id;
        }

        @Override
        public int getNumberOfRetries() {
            return 0;
        }

        @Override
        public void signalFailedWithKnownReason(Throwable t) {
            outcome = "failed";
        }

        @Override
        public void signalFailedWithUnknownReason(Throwable t) {
            outcome = "failed";
        }

        @Override
        public void retryLater() {
            outcome = "retry";
        }

        @Override
        public void updateAndRetryLater(String committable) {
            outcome = "retry";
        }

        @Override
        public void signalAlreadyCommitted() {
            outcome = "committed";
        }
    }

    @Test
    void aRefusedCommitStopsTheJobNamingItsCheckpointAndCounts() throws Exception {
        SimpleCounter failures = new SimpleCounter();
        List<String> log = new ArrayList<>();
        List<String> committedBefore = List.of("freqcap-deliveries@deliveries-0-43");
        CommitGuard<String> guard =
                new CommitGuard<>(
                        new Answering(log), id -> id, failures, committedBefore::contains);

        Request ok = new Request("freqcap-deliveries@deliveries-0-40");
        Request later = new Request("freqcap-deliveries@deliveries-1-41");
        guard.commit(List.of(ok, later));
        assertEquals(0, failures.getCount());
        assertEquals("retry", later.outcome, "a retry is the connector's, untouched");

        Request lost = new Request("freqcap-deliveries@deliveries-1-42");
        SuppressRestartsException e =
                assertThrows(SuppressRestartsException.class, () -> guard.commit(List.of(lost)));
        assertEquals(1, failures.getCount());
        assertEquals("failed", lost.outcome, "the connector still hears of it");
        String line = e.getCause().getMessage();
        assertTrue(
                line.startsWith(
                        "Kafka refused to commit transaction freqcap-deliveries@deliveries-1-42"
                                + " (checkpoint 42, subtask 1) (InvalidTxnStateException)"),
                line);
        assertTrue(line.contains("lost"), line);
    }

    @Test
    void aRefusalOfATransactionCommittedBeforeARestoreLosesNothing() throws Exception {
        SimpleCounter failures = new SimpleCounter();
        // Committed before the failure; the restored job commits it again and is fenced.
        String id = "freqcap-audit@capping-audit-0-42";
        CommitGuard<String> guard =
                new CommitGuard<>(new Answering(new ArrayList<>()), t -> t, failures, id::equals);
        guard.commit(List.of(new Request(id)));
        assertEquals(0, failures.getCount());
    }
}
