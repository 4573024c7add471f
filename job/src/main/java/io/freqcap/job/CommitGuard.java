package io.freqcap.job;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a commit Kafka refuses fail the job, once and loudly (contract.md §8). A Kafka outage
 * longer than the transaction timeout lets Kafka abort a transaction that Flink already counted as
 * part of a completed checkpoint. The connector logs that, counts it and goes on, with those
 * outputs gone and the input offsets past them. Here the job stops instead: one log line naming the
 * transaction and its checkpoint, the counter {@code kafkaCommitFailures} (alert {@code
 * FreqcapKafkaCommitFailed}), and no automatic restart, since a restart would resume from that very
 * checkpoint without its outputs. Recovery (docs/operations.md): start the job again from the
 * checkpoint before it, which decides that interval again.
 *
 * <p>The connector reports a refusal the same way when it commits again, after a restore, a
 * transaction that was committed before the failure (Kafka then fences the old producer): that
 * loses nothing. So a refusal counts only when Kafka says the transaction did not commit ({@code
 * committed} is asked; when it cannot tell, the guard assumes the worst).
 */
final class CommitGuard<C> implements Committer<C> {
    private static final Logger LOG = LoggerFactory.getLogger(CommitGuard.class);

    private final Committer<C> delegate;
    private final Function<C, String> transactionalId;
    private final Counter failures;
    private final java.util.function.Predicate<String> committed;

    /**
     * @param committed whether Kafka holds the transaction of an id as committed (false when it
     *     cannot tell)
     */
    CommitGuard(
            Committer<C> delegate,
            Function<C, String> transactionalId,
            Counter failures,
            java.util.function.Predicate<String> committed) {
        this.delegate = delegate;
        this.transactionalId = transactionalId;
        this.failures = failures;
        this.committed = committed;
    }

    @Override
    public void commit(Collection<CommitRequest<C>> requests)
            throws IOException, InterruptedException {
        List<Refusal> refused = new ArrayList<>();
        List<CommitRequest<C>> watched = new ArrayList<>(requests.size());
        for (CommitRequest<C> r : requests) {
            watched.add(new Watched<>(r, refused, transactionalId));
        }
        delegate.commit(watched);
        refused.removeIf(
                r -> {
                    if (committed.test(r.transactionalId())) {
                        LOG.info(
                                "Transaction {} was committed before; nothing lost",
                                r.transactionalId());
                        return true;
                    }
                    return false;
                });
        if (!refused.isEmpty()) {
            failures.inc(refused.size());
            List<String> shown = new ArrayList<>();
            for (Refusal r : refused) {
                shown.add(describe(r.transactionalId()) + " (" + r.cause() + ")");
            }
            String line =
                    "Kafka refused to commit "
                            + String.join("; ", shown)
                            + ": the outputs of that checkpoint are lost (a Kafka outage longer"
                            + " than --transaction-timeout?). The job stops without restarting:"
                            + " start it again from the checkpoint before, see docs/operations.md"
                            + " (Security and failures: a commit Kafka refused)";
            LOG.error(line);
            throw new SuppressRestartsException(new IllegalStateException(line));
        }
    }

    /**
     * The checkpoint of a transactional id of the connector's naming: {@code
     * prefix-subtask-checkpoint}.
     */
    static String describe(String transactionalId) {
        int last = transactionalId.lastIndexOf('-');
        int before = last > 0 ? transactionalId.lastIndexOf('-', last - 1) : -1;
        if (last < 0 || before < 0) {
            return "transaction " + transactionalId;
        }
        return "transaction "
                + transactionalId
                + " (checkpoint "
                + transactionalId.substring(last + 1)
                + ", subtask "
                + transactionalId.substring(before + 1, last)
                + ")";
    }

    @Override
    public void close() throws Exception {
        delegate.close();
    }

    /** A commit Kafka refused: the transaction and the kind of error. */
    private record Refusal(String transactionalId, String cause) {}

    /** A request that remembers whether its commit failed. */
    private record Watched<C>(
            CommitRequest<C> request, List<Refusal> refused, Function<C, String> transactionalId)
            implements CommitRequest<C> {
        @Override
        public C getCommittable() {
            return request.getCommittable();
        }

        @Override
        public int getNumberOfRetries() {
            return request.getNumberOfRetries();
        }

        @Override
        public void signalFailedWithKnownReason(Throwable t) {
            refuse(t);
            request.signalFailedWithKnownReason(t);
        }

        @Override
        public void signalFailedWithUnknownReason(Throwable t) {
            refuse(t);
            request.signalFailedWithUnknownReason(t);
        }

        private void refuse(Throwable t) {
            refused.add(
                    new Refusal(
                            transactionalId.apply(request.getCommittable()),
                            t.getClass().getSimpleName()));
        }

        @Override
        public void retryLater() {
            request.retryLater();
        }

        @Override
        public void updateAndRetryLater(C committable) {
            request.updateAndRetryLater(committable);
        }

        @Override
        public void signalAlreadyCommitted() {
            request.signalAlreadyCommitted();
        }
    }
}
