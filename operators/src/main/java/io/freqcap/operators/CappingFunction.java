package io.freqcap.operators;

import io.freqcap.schema.AuditEvent;
import io.freqcap.schema.AuditRecords;
import io.freqcap.schema.ConfigRecord;
import io.freqcap.schema.ControlRecord;
import io.freqcap.schema.Decision;
import io.freqcap.schema.Delivery;
import io.freqcap.schema.InboundMessage;
import io.freqcap.schema.LimitConfig;
import io.freqcap.schema.MalformedRecordException;
import io.freqcap.schema.OutboundMessage;
import io.freqcap.schema.UserHistory;
import io.freqcap.schema.UserHistorySerializer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides every input record exactly once (SPEC §5): ALLOWED and EXEMPT go to the main output,
 * everything else to {@link #AUDIT}. Keyed by userId; malformed records arrive under negative keys
 * and touch no state.
 *
 * <p>Control records (the broadcast input) are parsed by every parallel instance and applied by
 * version (a config replaces the one in force only if its version is higher), so instances agree
 * whatever order they see them in. Only instance 0 writes the INVALID_CONTROL audit record of a
 * control record that is not applied, so each is audited once.
 *
 * <p><b>State cleanup.</b> A user's history can matter only to messages whose intervals reach back
 * to it. Once messages arrive a longest window W past the latest counted one, none does. Each user
 * with a history therefore has one event-time timer, at latest + 2W rounded up to the hour, that
 * clears the history once the watermark passes it (the extra W is slack for late messages); if the
 * history moved on meanwhile, the timer re-registers at the new due time. Event time, not state
 * TTL: TTL only knows processing time, and decisions are made on message time, which a backfill or
 * a replay can move far from the wall clock; and TTL is fixed when the job starts while W changes
 * with every config.
 */
public class CappingFunction
        extends KeyedBroadcastProcessFunction<Long, InboundMessage, ControlRecord, Delivery>
        implements CheckpointedFunction {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(CappingFunction.class);

    public static final OutputTag<AuditEvent> AUDIT =
            new OutputTag<>("capping-audit", TypeInformation.of(AuditEvent.class));

    public static final ValueStateDescriptor<UserHistory> HISTORY =
            new ValueStateDescriptor<>("history-v1", UserHistorySerializer.INSTANCE);

    /**
     * The config in force, as JSON text. Union list state: every instance holds the same config,
     * and after a restore (at any parallelism) each takes the highest version it finds, so neither
     * a rescale nor a restart with an older {@code --limits} can lower the version in force.
     */
    public static final ListStateDescriptor<String> CONFIG_IN_FORCE =
            new ListStateDescriptor<>("limit-config-v1", Types.STRING);

    static final long CLEANUP_ROUNDING_MILLIS = 3_600_000L;

    private final String initialConfigJson;

    private transient LimitConfig config;
    private transient ListState<String> configState;
    private transient boolean auditsControl;
    private transient ValueState<UserHistory> history;
    private transient Counter allowed;
    private transient Counter exempt;
    private transient Counter rejected;
    private transient Counter duplicate;
    private transient Counter stale;
    private transient Counter malformed;
    private transient Counter invalidControl;

    /**
     * @param initialConfigJson the config given at start; in force until a higher version arrives
     */
    public CappingFunction(String initialConfigJson) {
        this.initialConfigJson = initialConfigJson;
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        config = LimitConfig.parse(initialConfigJson);
        configState = context.getOperatorStateStore().getUnionListState(CONFIG_IN_FORCE);
        for (String json : configState.get()) {
            LimitConfig restored = LimitConfig.parse(json);
            if (restored.version() > config.version()) {
                config = restored;
            }
        }
        LOG.info("Limit config version {} is in force", config.version());
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        configState.update(List.of(config.json()));
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        history = getRuntimeContext().getState(HISTORY);
        auditsControl = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0;
        MetricGroup metrics = getRuntimeContext().getMetricGroup();
        allowed = metrics.counter("allowed");
        exempt = metrics.counter("exempt");
        rejected = metrics.counter("rejected");
        duplicate = metrics.counter("duplicate");
        stale = metrics.counter("stale");
        malformed = metrics.counter("malformed");
        invalidControl = metrics.counter("invalidControl");
        metrics.gauge("configVersion", () -> config.version());
        // Segments arrive with the segments issue; until then every user has the "*" rule.
        metrics.gauge("segments", () -> 0);
        metrics.gauge("segmentBytes", () -> 0L);
    }

    @Override
    public void processElement(InboundMessage in, ReadOnlyContext ctx, Collector<Delivery> out)
            throws Exception {
        if (in.isMalformed()) {
            malformed.inc();
            ctx.output(
                    AUDIT,
                    AuditRecords.unreadable(
                            Decision.MALFORMED,
                            in.error(),
                            in.value(),
                            in.topic(),
                            in.partition(),
                            in.offset()));
            return;
        }
        LimitConfig cfg = config;
        OutboundMessage m = in.message();
        UserHistory before = history.value();
        if (before == null) {
            before = UserHistory.EMPTY;
        }
        String segment = LimitConfig.DEFAULT_SEGMENT;
        CappingRule.Verdict v = CappingRule.decide(before, m, cfg, segment);
        switch (v.decision()) {
            case ALLOWED:
                allowed.inc();
                history.update(v.history());
                scheduleCleanup(ctx, before, v.history(), cfg);
                out.collect(delivery(in, m, v, cfg));
                break;
            case EXEMPT:
                exempt.inc();
                out.collect(delivery(in, m, v, cfg));
                break;
            default:
                (v.decision() == Decision.REJECTED
                                ? rejected
                                : v.decision() == Decision.DUPLICATE ? duplicate : stale)
                        .inc();
                ctx.output(
                        AUDIT,
                        AuditRecords.decision(
                                v.decision(),
                                m,
                                v.segment(),
                                cfg.version(),
                                v.violations(),
                                v.retryAfter(),
                                v.reason(),
                                in.value()));
        }
    }

    private static Delivery delivery(
            InboundMessage in, OutboundMessage m, CappingRule.Verdict v, LimitConfig cfg) {
        byte[] key =
                in.key() != null
                        ? in.key()
                        : Long.toString(m.userId()).getBytes(StandardCharsets.UTF_8);
        return new Delivery(key, in.value(), v.decision().name(), v.segment(), cfg.version());
    }

    /**
     * Registers the cleanup timer when a user's history comes into being. While it lives, the one
     * timer is enough: when it fires it clears the history or, if later messages (or a longer
     * window) moved the due time, registers the next one. One timer per user, not one per message,
     * keeps both the timer state and the work per message small.
     */
    private void scheduleCleanup(
            ReadOnlyContext ctx, UserHistory before, UserHistory after, LimitConfig cfg) {
        if (before.isEmpty()) {
            ctx.timerService()
                    .registerEventTimeTimer(cleanupTime(after.latest(), cfg.longestWindowMillis()));
        }
    }

    static long cleanupTime(long latest, long longestWindow) {
        long at = latest + 2 * longestWindow;
        if (at < latest || at > Long.MAX_VALUE - CLEANUP_ROUNDING_MILLIS) {
            return Long.MAX_VALUE - 1;
        }
        return (at + CLEANUP_ROUNDING_MILLIS - 1)
                / CLEANUP_ROUNDING_MILLIS
                * CLEANUP_ROUNDING_MILLIS;
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Delivery> out)
            throws Exception {
        UserHistory h = history.value();
        if (h == null || h.isEmpty()) {
            history.clear();
            return;
        }
        long due = cleanupTime(h.latest(), config.longestWindowMillis());
        if (due <= timestamp) {
            history.clear();
        } else {
            // A later message or a longer window moved the due time; its timer may not exist yet.
            ctx.timerService().registerEventTimeTimer(due);
        }
    }

    @Override
    public void processBroadcastElement(ControlRecord rec, Context ctx, Collector<Delivery> out)
            throws Exception {
        String error;
        try {
            if (rec.kind() != ControlRecord.Kind.CONFIG) {
                throw new MalformedRecordException("segment updates are not supported yet");
            }
            ConfigRecord parsed = ConfigRecord.parse(rec.value());
            if (parsed instanceof ConfigRecord.Command c) {
                applyCommand(c);
                return;
            }
            LimitConfig next = (LimitConfig) parsed;
            if (next.version() <= config.version()) {
                throw new MalformedRecordException(
                        "stale version: "
                                + next.version()
                                + " is not greater than the version in force, "
                                + config.version());
            }
            config = next;
            LOG.info("Limit config version {} is in force", next.version());
            return;
        } catch (MalformedRecordException e) {
            error = e.getMessage();
        }
        if (auditsControl) {
            invalidControl.inc();
            ctx.output(
                    AUDIT,
                    AuditRecords.unreadable(
                            Decision.INVALID_CONTROL,
                            error,
                            rec.value(),
                            rec.topic(),
                            rec.partition(),
                            rec.offset()));
        }
    }

    private void applyCommand(ConfigRecord.Command c) throws MalformedRecordException {
        if (!ConfigRecord.Command.REBUILD_MIRROR.equals(c.name())) {
            throw new MalformedRecordException("unknown command \"" + c.name() + "\"");
        }
        LOG.info("rebuild-mirror received; this job runs without a Redis mirror, nothing to do");
    }
}
