package io.freqcap.operators.capping;

import io.freqcap.schema.Decision;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;

/** The capping task's metrics (contract.md §9): a counter per decision, and the cleanup's. */
final class CappingMetrics {
    private final Counter allowed;
    private final Counter exempt;
    private final Counter rejected;
    private final Counter duplicate;
    private final Counter stale;
    private final Counter malformed;
    private final Counter invalidControl;
    final Counter cleared;
    final Counter cacheHits;
    final Counter shadowRejected;
    private final MetricGroup group;

    CappingMetrics(MetricGroup metrics, ControlHandler control) {
        group = metrics;
        allowed = metrics.counter("allowed");
        exempt = metrics.counter("exempt");
        rejected = metrics.counter("rejected");
        duplicate = metrics.counter("duplicate");
        stale = metrics.counter("stale");
        malformed = metrics.counter("malformed");
        invalidControl = metrics.counter("invalidControl");
        cleared = metrics.counter("historiesCleared");
        cacheHits = metrics.counter("historyCacheHits");
        shadowRejected = metrics.counter("shadowRejected");
        metrics.gauge("configVersion", () -> control.config().version());
        metrics.gauge("segments", () -> control.segments().size());
        metrics.gauge("segmentBytes", () -> control.segments().bytes());
    }

    /** Gauges of the long histories a task holds in memory (heavy users). */
    void watch(HistoryStore histories) {
        group.gauge("longHistories", histories::liveHistories);
        group.gauge("longHistoryEntries", histories::liveEntries);
    }

    void count(Decision d) {
        switch (d) {
            case ALLOWED -> allowed.inc();
            case EXEMPT -> exempt.inc();
            case REJECTED -> rejected.inc();
            case DUPLICATE -> duplicate.inc();
            case STALE -> stale.inc();
            case MALFORMED -> malformed.inc();
            case INVALID_CONTROL -> invalidControl.inc();
        }
    }
}
