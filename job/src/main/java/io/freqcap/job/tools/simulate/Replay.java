package io.freqcap.job.tools.simulate;

import io.freqcap.operators.backtest.Backtest;
import io.freqcap.operators.capping.Bounds;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.preference.UserPreferences;
import io.freqcap.schema.segment.SegmentUpdate;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One config's backtest, its decision lines (contract.md §8) and its summary. A held message's line
 * is its final outcome: where the config preempts, a held message's line waits until the replay's
 * clock reaches its send time (or a later message takes its place, and its line is the PREEMPTED
 * record), and the lines after it wait with it, so that they stay in input order. Without {@code
 * preempt} every line is final at once and nothing waits.
 */
final class Replay implements AutoCloseable {
    final Backtest backtest;
    final SimulationSummary summary;
    private final OutputStream out;
    private final int maxRecordBytes;
    private final Consumer<Decided> finals;
    private final boolean preempts;

    /** Records decided, in input order, whose outcome may still change or that wait behind one. */
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();

    /** The pending held messages still waiting, by user and messageId. */
    private final Map<String, Pending> waiting = new HashMap<>();

    private static final class Pending {
        Decided decided;
        final long length;

        Pending(Decided decided, long length) {
            this.decided = decided;
            this.length = length;
        }

        /** Whether its outcome may still change at the replay's clock {@code now}. */
        boolean open(long now) {
            return decided.delivered() && decided.held() && decided.verdict().sendAt() > now;
        }
    }

    private Replay(
            Backtest backtest, OutputStream out, int maxRecordBytes, Consumer<Decided> finals) {
        this.backtest = backtest;
        this.summary = new SimulationSummary(backtest.config().version());
        this.out = out;
        this.maxRecordBytes = maxRecordBytes;
        this.finals = finals;
        this.preempts = backtest.config().preempts();
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
                Backtest.start(config, segments, bounds.segmentLoader(), s -> {}, preferences),
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
        Decided d = backtest.decide(in);
        if (!preempts) {
            emit(d, length);
            return;
        }
        for (HeldDelivery h : d.preempted()) {
            Pending p = waiting.remove(key(d.message().userId(), h.messageId()));
            if (p == null) {
                throw new IllegalStateException("preempted " + h.messageId() + " was not held");
            }
            p.decided = p.decided.preemptedBy(d.message());
        }
        Pending p = new Pending(d, length);
        pending.add(p);
        if (p.open(backtest.clock())) {
            waiting.put(key(d.message().userId(), d.message().messageId()), p);
        }
        flush(backtest.clock());
    }

    /** Writes the lines at the head that are final at {@code now}. */
    private void flush(long now) throws IOException {
        while (!pending.isEmpty() && !pending.peek().open(now)) {
            Pending p = pending.poll();
            if (p.decided.delivered() && p.decided.held()) {
                waiting.remove(key(p.decided.message().userId(), p.decided.message().messageId()));
            }
            emit(p.decided, p.length);
        }
    }

    private static String key(long user, String messageId) {
        return user + "/" + messageId;
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
        flush(Long.MAX_VALUE);
    }

    @Override
    public void close() throws IOException {
        backtest.close();
        if (out != null) {
            out.close();
        }
    }
}
