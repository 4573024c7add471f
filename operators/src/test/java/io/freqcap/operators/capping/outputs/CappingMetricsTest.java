package io.freqcap.operators.capping.outputs;

import static io.freqcap.schema.Configs.rule;
import static io.freqcap.schema.Configs.version;
import static io.freqcap.schema.Configs.window;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.control.ControlHandler;
import io.freqcap.operators.segments.FlinkFileLoader;
import io.freqcap.schema.Records;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.message.InboundMessage;
import java.util.List;
import java.util.Map;
import org.apache.flink.metrics.HistogramStatistics;
import org.apache.flink.metrics.testutils.MetricListener;
import org.junit.jupiter.api.Test;

class CappingMetricsTest {
    static final long NOW = 1_763_800_000_000L;
    static final String CONFIG =
            version(4).rule(rule("vip", window("1d", 5))).rule(rule("*", window("1d", 1))).json();

    @Test
    void countsDecisionsPerSegmentWithARuleAndTheLagOfMessagesStampedNearNow() throws Exception {
        MetricListener listener = new MetricListener();
        ControlHandler control =
                ControlHandler.start(
                        LimitConfig.parse(CONFIG),
                        List.of(),
                        Map.of(),
                        List.of(),
                        FlinkFileLoader.INSTANCE,
                        s -> {});
        CappingMetrics metrics = new CappingMetrics(listener.getMetricGroup(), control, () -> NOW);
        metrics.decided(decided(Decision.ALLOWED, "vip", NOW - 2_000));
        metrics.decided(decided(Decision.ALLOWED, "vip", NOW - 4_000));
        metrics.decided(decided(Decision.REJECTED, "vip", NOW + 30_000)); // clock skew: lag 0
        metrics.decided(decided(Decision.REJECTED, "*", NOW - 2 * 3_600_000)); // a replay: no lag
        metrics.decided(decided(Decision.ALLOWED, "*", NOW + 3_600_000)); // scheduled ahead: no lag
        metrics.decided(decided(Decision.EXEMPT, "vip", NOW - 6_000));
        metrics.decided(
                decided(Decision.ALLOWED, "churned", NOW)); // no rule: no counters of its own

        assertEquals(2, listener.getCounter("segment", "vip", "allowed").get().getCount());
        assertEquals(1, listener.getCounter("segment", "vip", "rejected").get().getCount());
        assertEquals(1, listener.getCounter("segment", "*", "allowed").get().getCount());
        assertEquals(1, listener.getCounter("segment", "*", "rejected").get().getCount());
        assertFalse(listener.getCounter("segment", "churned", "allowed").isPresent());
        assertEquals(4, listener.getCounter("allowed").get().getCount());
        assertEquals(2, listener.getCounter("rejected").get().getCount());
        assertEquals(1, listener.getCounter("exempt").get().getCount());

        HistogramStatistics lag = listener.getHistogram("decisionLagMillis").get().getStatistics();
        assertEquals(5, lag.size());
        assertEquals(0, lag.getMin());
        assertEquals(6_000, lag.getMax());
        assertEquals((2_000 + 4_000 + 0 + 6_000 + 0) / 5.0, lag.getMean(), 1e-9);
    }

    /** A record so decided, of a message stamped at {@code timestamp}. */
    private static Decided decided(Decision d, String segment, long timestamp) {
        InboundMessage in = Records.message("m", 42, timestamp).inbound(0);
        Verdict v =
                d == Decision.REJECTED
                        ? Verdict.rejected(segment, List.of(), null)
                        : Verdict.passed(d, segment);
        return new Decided(in, in.message(), null, v, timestamp, List.of(), null);
    }
}
