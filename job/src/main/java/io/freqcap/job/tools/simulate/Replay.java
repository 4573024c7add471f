package io.freqcap.job.tools.simulate;

import io.freqcap.operators.backtest.Backtest;
import io.freqcap.operators.capping.Bounds;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.segment.SegmentUpdate;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** One config's backtest, its decision lines (contract.md §8) and its summary. */
final class Replay implements AutoCloseable {
    final Backtest backtest;
    final SimulationSummary summary;
    private final OutputStream out;
    private final int maxRecordBytes;

    private Replay(Backtest backtest, OutputStream out, int maxRecordBytes) {
        this.backtest = backtest;
        this.summary = new SimulationSummary(backtest.config().version());
        this.out = out;
        this.maxRecordBytes = maxRecordBytes;
    }

    /**
     * @param output the decision lines' file, or null for none
     */
    static Replay start(
            LimitConfig config, List<SegmentUpdate> segments, Bounds bounds, String output)
            throws IOException, MalformedRecordException {
        OutputStream out =
                output == null
                        ? null
                        : new BufferedOutputStream(Files.newOutputStream(Path.of(output)), 1 << 20);
        return new Replay(
                Backtest.start(config, segments, bounds.segmentLoader(), s -> {}),
                out,
                bounds.maxRecordBytes());
    }

    /**
     * Decides one input record and writes its line: the delivery's for ALLOWED and EXEMPT, the
     * audit record for the rest.
     *
     * @param length the input's full length (more than its bytes when only the first were read)
     */
    Decided decide(InboundMessage in, long length) throws IOException {
        Decided d = backtest.decide(in);
        summary.add(d);
        if (out != null) {
            out.write(
                    d.delivered()
                            ? d.deliveryLine().json()
                            : d.audit(length, maxRecordBytes).json());
            out.write('\n');
        }
        return d;
    }

    @Override
    public void close() throws IOException {
        backtest.close();
        if (out != null) {
            out.close();
        }
    }
}
