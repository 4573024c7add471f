package io.freqcap.operators.capping.outputs;

import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.control.ControlHandler;
import io.freqcap.schema.decision.Decision;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;

/**
 * The capping task's metrics (contract.md §9): a counter per decision, and the cleanup's; held
 * messages ({@code held}, {@code released}, {@code forgotten}, {@code cancelled}, {@code
 * preempted}, {@code heldNow}) and the held topic's records ({@code heldNotices}); preferences and
 * receipts applied or ignored, and the users with preferences; how far behind decisions run ({@code
 * decisionLagMillis}); ALLOWED and REJECTED per segment.
 */
public final class CappingMetrics {
    /** Messages stamped further back than this are replays or backfills: not a decision's lag. */
    static final long LAG_HORIZON_MILLIS = 3_600_000;

    /** Messages stamped this far ahead count as lag 0 (clock skew); further ones are scheduled. */
    static final long LAG_SKEW_MILLIS = 60_000;

    private final Counter allowed;
    private final Counter exempt;
    private final Counter rejected;
    private final Counter duplicate;
    private final Counter stale;
    private final Counter malformed;
    private final Counter invalidControl;
    public final Counter cleared;
    public final Counter cacheHits;
    public final Counter shadowRejected;
    public final Counter held;
    public final Counter released;
    private final Counter forgotten;
    private final Counter cancelled;
    private final Counter preempted;
    public final Counter preferencesApplied;
    public final Counter preferencesIgnored;
    public final Counter receiptsApplied;
    public final Counter receiptsIgnored;
    private final Counter fatigued;
    public final Counter engagements;
    private final Counter preferenceRejected;
    private final Counter lifetimeRejected;
    public final Counter undecided;
    public final Counter heldNotices;
    private final MetricGroup group;
    private final Histogram decisionLag;
    private final LongSupplier clock;
    private final ControlHandler control;
    // segmentId -> {allowed, rejected}; only segments with a rule in the config in force
    private final Map<String, Counter[]> bySegment = new HashMap<>();

    /** Hours ahead with a {@code heldDue} gauge of their own; the last one counts all later. */
    public static final int HELD_DUE_HOURS = 24;

    /** How many held messages a task holds for an hour of send time: (now, hours ahead). */
    public interface HeldDue {
        long count(long now, int hoursAhead);
    }

    /**
     * Gauges {@code heldDue} of group {@code hoursAhead} = 00..23 (the held messages whose send
     * time falls in that hour from now's, UTC hours; 0 also counts the overdue ones going out now)
     * and {@code 24+} (later): what waits by hour of send time.
     */
    public void heldDue(HeldDue inHour, HeldDue fromHour) {
        for (int h = 0; h < HELD_DUE_HOURS; h++) {
            int hours = h;
            // Two digits, so that the labels sort as numbers: 00, 01, ..., 23, 24+.
            group.addGroup("hoursAhead", String.format("%02d", h))
                    .gauge("heldDue", (Gauge<Long>) () -> inHour.count(clock.getAsLong(), hours));
        }
        group.addGroup("hoursAhead", HELD_DUE_HOURS + "+")
                .gauge(
                        "heldDue",
                        (Gauge<Long>) () -> fromHour.count(clock.getAsLong(), HELD_DUE_HOURS));
    }

    public CappingMetrics(MetricGroup metrics, ControlHandler control) {
        this(metrics, control, System::currentTimeMillis);
    }

    CappingMetrics(MetricGroup metrics, ControlHandler control, LongSupplier clock) {
        group = metrics;
        this.control = control;
        this.clock = clock;
        decisionLag =
                metrics.histogram("decisionLagMillis", new DescriptiveStatisticsHistogram(1000));
        allowed = metrics.counter("allowed");
        exempt = metrics.counter("exempt");
        rejected = metrics.counter("rejected");
        duplicate = metrics.counter("duplicate");
        stale = metrics.counter("stale");
        malformed = metrics.counter("malformed");
        undecided = metrics.counter("undecided");
        invalidControl = metrics.counter("invalidControl");
        cleared = metrics.counter("historiesCleared");
        cacheHits = metrics.counter("historyCacheHits");
        shadowRejected = metrics.counter("shadowRejected");
        held = metrics.counter("held");
        released = metrics.counter("released");
        heldNotices = metrics.counter("heldNotices");
        forgotten = metrics.counter("forgotten");
        cancelled = metrics.counter("cancelled");
        preempted = metrics.counter("preempted");
        preferencesApplied = metrics.counter("preferencesApplied");
        preferencesIgnored = metrics.counter("preferencesIgnored");
        receiptsApplied = metrics.counter("receiptsApplied");
        receiptsIgnored = metrics.counter("receiptsIgnored");
        fatigued = metrics.counter("fatigued");
        engagements = metrics.counter("engagements");
        preferenceRejected = metrics.counter("preferenceRejected");
        lifetimeRejected = metrics.counter("lifetimeRejected");
        metrics.gauge("configVersion", () -> control.config().version());
        metrics.gauge("segments", () -> control.segments().size());
        metrics.gauge("segmentBytes", () -> control.segments().bytes());
    }

    /**
     * A gauge of a state the function keeps ({@code heldNow}, {@code usersWithPreferences}, the
     * long histories'), handed in so that the metrics need not know the stores.
     */
    public <T> void gauge(String name, Gauge<T> value) {
        group.gauge(name, value);
    }

    /**
     * Counts a decided record: its decision, whether the shadow rules would have rejected it,
     * whether a rule's {@code fatigue} lowered its limits, whether it was held (and released at
     * once, its send time passed), the held messages whose place it took ({@code preempted}), its
     * segment's counter (ALLOWED and REJECTED), and the lag from its timestamp to now when it is
     * stamped near now.
     */
    public void decided(Decided decided) {
        Decision d = decided.decision();
        count(d);
        if (d == Decision.MALFORMED) {
            return;
        }
        for (int i = 0; i < decided.preempted().size(); i++) {
            preempted.inc();
        }
        if (d == Decision.REJECTED && decided.byPreference()) {
            preferenceRejected.inc();
        }
        if (d == Decision.REJECTED && decided.byLifetime()) {
            lifetimeRejected.inc();
        }
        if (decided.shadowRejects()) {
            shadowRejected.inc();
        }
        if (decided.verdict().lowered()) {
            fatigued.inc();
        }
        if (decided.held()) {
            held.inc();
            if (decided.route() == Decided.Route.NOW) {
                released.inc();
            }
        }
        if (d == Decision.ALLOWED || d == Decision.REJECTED) {
            Counter[] counters = bySegment.get(decided.segment());
            if (counters == null) {
                counters = segmentCounters(decided.segment());
            }
            if (counters != null) {
                counters[d == Decision.ALLOWED ? 0 : 1].inc();
            }
        }
        long lag = clock.getAsLong() - decided.message().timestamp();
        if (lag <= LAG_HORIZON_MILLIS && lag >= -LAG_SKEW_MILLIS) {
            decisionLag.update(Math.max(0, lag));
        }
    }

    /**
     * The counters of a segment with a rule, made on its first decision; null for another (a
     * segment's rule can only apply while the config has one, so the counters stay few).
     */
    private Counter[] segmentCounters(String segment) {
        if (!control.config().hasRule(segment)) {
            return null;
        }
        MetricGroup g = group.addGroup("segment", segment);
        Counter[] counters = {g.counter("allowed"), g.counter("rejected")};
        bySegment.put(segment, counters);
        return counters;
    }

    public void count(Decision d) {
        switch (d) {
            case ALLOWED -> allowed.inc();
            case EXEMPT -> exempt.inc();
            case REJECTED -> rejected.inc();
            case DUPLICATE -> duplicate.inc();
            case STALE -> stale.inc();
            case MALFORMED -> malformed.inc();
            case INVALID_CONTROL -> invalidControl.inc();
            case FORGOTTEN -> forgotten.inc();
            case CANCELLED -> cancelled.inc();
            case PREEMPTED -> preempted.inc();
        }
    }
}
