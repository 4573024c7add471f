package io.freqcap.job.tools.simulate;

import io.freqcap.operators.backtest.Backtest;
import io.freqcap.operators.backtest.FinalOutcomes;
import io.freqcap.operators.capping.Bounds;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.capping.receipt.Receipts;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.preference.UserPreferences;
import io.freqcap.schema.receipt.DeliveryReceipt;
import io.freqcap.schema.segment.SegmentUpdate;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One config's backtest, its decision lines (contract.md §8) and its summary. A held message's line
 * is its final outcome ({@link FinalOutcomes}): where the config preempts, its line and the lines
 * after it wait until it is final, so that they stay in input order.
 */
final class Replay implements AutoCloseable {
    final Backtest backtest;
    final SimulationSummary summary;
    private final OutputStream out;
    private final int maxRecordBytes;
    private final Consumer<Decided> finals;
    private final FinalOutcomes<Long> outcomes;

    private Replay(
            Backtest backtest, OutputStream out, int maxRecordBytes, Consumer<Decided> finals) {
        this.backtest = backtest;
        this.summary = new SimulationSummary(backtest.config().version());
        this.out = out;
        this.maxRecordBytes = maxRecordBytes;
        this.finals = finals;
        this.outcomes = new FinalOutcomes<>(backtest.config().preempts(), this::emit);
    }

    /**
     * @param output the decision lines' file, or null for none
     * @param finals receives each record's final outcome, in input order
     * @param preferences users' preferences in force for the whole replay
     */
    static Replay start(
            LimitConfig config,
            List<SegmentUpdate> segments,
            Bounds bounds,
            String output,
            Consumer<Decided> finals,
            Map<Long, UserPreferences> preferences)
            throws IOException, MalformedRecordException {
        OutputStream out =
                output == null
                        ? null
                        : new BufferedOutputStream(Files.newOutputStream(Path.of(output)), 1 << 20);
        return new Replay(
                Backtest.start(config, segments, bounds, s -> {}, preferences),
                out,
                bounds.maxRecordBytes(),
                finals);
    }

    /**
     * Decides one input record; writes its line, and those of the records before it, once final:
     * the delivery's for ALLOWED and EXEMPT, the audit record for the rest.
     *
     * @param length the input's full length (more than its bytes when only the first were read)
     */
    void decide(InboundMessage in, long length) throws IOException {
        outcomes.add(backtest.decide(in), length, backtest.clock());
    }

    /**
     * Applies a delivery receipt as the job does (contract.md §11).
     *
     * @param latest the latest an engagement may be stamped: the machine's clock plus {@code
     *     --max-future}
     */
    void receipt(DeliveryReceipt r, long latest) {
        backtest.receipt(r, new Receipts.Time(r.timestamp(), latest));
    }

    private void emit(Decided d, long length) throws IOException {
        summary.add(d);
        finals.accept(d);
        if (out != null) {
            out.write(
                    d.delivered()
                            ? d.deliveryLine().json()
                            : d.audit(length, maxRecordBytes).json());
            out.write('\n');
        }
    }

    /** Writes every line still waiting: the input is at its end, so every outcome is final. */
    void finish() throws IOException {
        outcomes.finish();
    }

    @Override
    public void close() throws IOException {
        backtest.close();
        if (out != null) {
            out.close();
        }
    }
}
