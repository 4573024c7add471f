package io.freqcap.operators.mirror;

import io.freqcap.schema.mirror.MirrorWrite;
import io.freqcap.schema.mirror.MirrorWriteSerializer;
import java.io.IOException;
import java.util.Collection;
import java.util.List;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.SupportsWriterState;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * Writes what the capping operator counted into Redis (contract.md §7), without ever making a
 * decision wait on Redis. See {@link RedisMirrorWriter} for batching, retries, the backlog and
 * checkpoints.
 */
public final class RedisMirrorSink
        implements Sink<MirrorWrite>, SupportsWriterState<MirrorWrite, MirrorWrite> {
    private static final long serialVersionUID = 1L;

    private final MirrorSettings settings;

    public RedisMirrorSink(MirrorSettings settings) {
        RedisConnection.parse(settings.uri()); // fail at build time, not in a task
        this.settings = settings;
    }

    @Override
    public StatefulSinkWriter<MirrorWrite, MirrorWrite> createWriter(WriterInitContext context) {
        return new RedisMirrorWriter(settings, context, List.of());
    }

    @Override
    public StatefulSinkWriter<MirrorWrite, MirrorWrite> restoreWriter(
            WriterInitContext context, Collection<MirrorWrite> backlog) throws IOException {
        return new RedisMirrorWriter(settings, context, backlog);
    }

    @Override
    public SimpleVersionedSerializer<MirrorWrite> getWriterStateSerializer() {
        return MirrorWriteSerializer.INSTANCE;
    }
}
