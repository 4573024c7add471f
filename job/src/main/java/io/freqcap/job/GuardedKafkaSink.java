package io.freqcap.job;

import java.io.IOException;
import java.util.Collection;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.connector.kafka.sink.KafkaCommittable;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.sink.KafkaWriterState;
import org.apache.flink.connector.kafka.sink.TwoPhaseCommittingStatefulSink;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.SupportsPostCommitTopology;
import org.apache.flink.streaming.api.datastream.DataStream;

/**
 * A {@link KafkaSink} whose committer is a {@link CommitGuard}: everything else (writers, state,
 * serializers, the post-commit topology) is the connector's own, so savepoints map as before.
 */
final class GuardedKafkaSink<IN>
        implements TwoPhaseCommittingStatefulSink<IN, KafkaWriterState, KafkaCommittable>,
                SupportsPostCommitTopology<KafkaCommittable> {
    private static final long serialVersionUID = 1L;

    /** The counter of commits Kafka refused (contract.md §9), on each sink's committer. */
    static final String COMMIT_FAILURES = "kafkaCommitFailures";

    private final KafkaSink<IN> delegate;
    private final java.util.Map<String, String> admin;

    /**
     * @param admin the settings of an admin client of the sink's Kafka (bootstrap, security)
     */
    GuardedKafkaSink(KafkaSink<IN> delegate, java.util.Map<String, String> admin) {
        this.delegate = delegate;
        this.admin = java.util.Map.copyOf(admin);
    }

    /** Whether Kafka's last transaction of {@code id} is committed; false when it cannot tell. */
    private boolean committed(String id) {
        java.util.Properties p = new java.util.Properties();
        p.putAll(admin);
        p.put("default.api.timeout.ms", "60000");
        try (org.apache.kafka.clients.admin.Admin a =
                org.apache.kafka.clients.admin.Admin.create(p)) {
            var d = a.describeTransactions(java.util.List.of(id)).description(id).get();
            return d.state() == org.apache.kafka.clients.admin.TransactionState.COMPLETE_COMMIT;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return false;
        }
    }

    @Override
    public Committer<KafkaCommittable> createCommitter(CommitterInitContext context)
            throws IOException {
        return new CommitGuard<>(
                delegate.createCommitter(context),
                KafkaCommittable::getTransactionalId,
                context.metricGroup().counter(COMMIT_FAILURES),
                this::committed);
    }

    @Override
    public SimpleVersionedSerializer<KafkaCommittable> getCommittableSerializer() {
        return delegate.getCommittableSerializer();
    }

    @Override
    public PrecommittingStatefulSinkWriter<IN, KafkaWriterState, KafkaCommittable> createWriter(
            WriterInitContext context) throws IOException {
        return delegate.createWriter(context);
    }

    @Override
    public PrecommittingStatefulSinkWriter<IN, KafkaWriterState, KafkaCommittable> restoreWriter(
            WriterInitContext context, Collection<KafkaWriterState> recoveredState)
            throws IOException {
        return delegate.restoreWriter(context, recoveredState);
    }

    @Override
    public SimpleVersionedSerializer<KafkaWriterState> getWriterStateSerializer() {
        return delegate.getWriterStateSerializer();
    }

    @Override
    public void addPostCommitTopology(
            DataStream<CommittableMessage<KafkaCommittable>> committables) {
        delegate.addPostCommitTopology(committables);
    }
}
