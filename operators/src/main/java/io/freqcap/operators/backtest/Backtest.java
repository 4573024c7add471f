package io.freqcap.operators.backtest;

import io.freqcap.operators.capping.rule.CappingRule;
import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.operators.control.ControlHandler;
import io.freqcap.operators.segments.SegmentLoader;
import io.freqcap.schema.CountedHistory;
import io.freqcap.schema.Decision;
import io.freqcap.schema.LimitConfig;
import io.freqcap.schema.MalformedRecordException;
import io.freqcap.schema.OutboundMessage;
import io.freqcap.schema.SegmentUpdate;
import io.freqcap.schema.UserHistory;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Decides messages as the capping operator does, offline: one config and one set of segments, every
 * user's history in memory, no Flink. Each user's messages are decided in the order given, as the
 * job decides them in partition order, with the same rule ({@link CappingRule#judge}), the same
 * segment resolution and the same history (short, long, pruned: {@link HistoryStore#grown}).
 *
 * <p>What it does not do: the job's periodic sweep, which clears a history once event time is twice
 * the longest window past its latest entry, and the swept horizon that comes with it. That can only
 * change a message that repeats a counted messageId more than twice the longest window later
 * (DUPLICATE here, ALLOWED in a job that swept in between), or one that arrives more than about the
 * longest window behind what the job had already swept (decided here, STALE in the job); when the
 * job sweeps depends on its event time and wall clock, not on the input alone.
 */
public final class Backtest implements AutoCloseable {
    private final ControlHandler control;
    private final LongMap<CountedHistory> histories = new LongMap<>(1 << 16);

    private Backtest(ControlHandler control) {
        this.control = control;
    }

    /**
     * @param segments full loads, as for the job's {@code --segments}
     * @param log where a segment that could not be applied is told
     */
    public static Backtest start(
            LimitConfig config,
            List<SegmentUpdate> segments,
            SegmentLoader loader,
            Consumer<String> log)
            throws IOException, MalformedRecordException {
        return new Backtest(
                ControlHandler.start(config, List.of(), Map.of(), segments, loader, log));
    }

    public LimitConfig config() {
        return control.config();
    }

    /** Decides one well-formed message and counts it when ALLOWED. */
    public CappingRule.Verdict decide(OutboundMessage m) {
        LimitConfig cfg = control.config();
        CountedHistory before = histories.get(m.userId());
        if (before == null) {
            before = UserHistory.EMPTY;
        }
        String segment = control.segments().resolve(m.userId(), cfg);
        String shadowSegment =
                cfg.hasShadow() ? control.segments().resolveShadow(m.userId(), cfg) : segment;
        CappingRule.Verdict v = CappingRule.judge(before, m, cfg, segment, shadowSegment);
        if (v.decision() == Decision.ALLOWED) {
            histories.put(m.userId(), HistoryStore.grown(before, m, false, cfg));
        }
        return v;
    }

    /** Users with a counted message. */
    public int users() {
        return histories.size();
    }

    @Override
    public void close() {
        control.close();
    }
}
