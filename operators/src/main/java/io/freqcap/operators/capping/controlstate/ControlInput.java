package io.freqcap.operators.capping.controlstate;

import io.freqcap.operators.control.ControlHandler;
import io.freqcap.operators.control.ControlHandler.Outcome;
import io.freqcap.operators.segments.FlinkFileLoader;
import io.freqcap.operators.segments.SegmentLoads;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.config.LimitConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.state.BroadcastState;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.api.common.typeinfo.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The capping task's control side and its operator state: the config in force, the segments, the
 * segment records waiting for their files, and the swept horizon. It restores them, applies control
 * records to them ({@link ControlHandler} decides) and snapshots them; what a record asks of the
 * keyed side (forget-user, rebuild-mirror) and audits are the function's.
 */
public final class ControlInput implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlInput.class);

    /**
     * The config in force, as JSON text. Union list state: every instance holds the same config,
     * and after a restore (at any parallelism) each takes the highest version it finds, so neither
     * a rescale nor a restart with an older {@code --limits} can lower the version in force.
     */
    static final ListStateDescriptor<String> CONFIG_IN_FORCE =
            new ListStateDescriptor<>("limit-config-v1", Types.STRING);

    /**
     * Whether lifetime counts are kept (contract.md §3): from the first config with a lifetime
     * limit in force on, under every later config. Union state: every task keeps the same.
     */
    static final ListStateDescriptor<Boolean> LIFETIME_COUNTING =
            new ListStateDescriptor<>("lifetime-counting-v1", Types.BOOLEAN);

    /**
     * The swept horizon: messages older than this are STALE, since a sweep of this job cleared
     * histories they might need. Union list state: after a restore, at any parallelism, each
     * instance takes the highest, which is safe for every key group.
     */
    static final ListStateDescriptor<Long> SWEPT_HORIZON =
            new ListStateDescriptor<>("swept-horizon-v1", Types.LONG);

    /**
     * Per config-topic partition, the offset commands are applied from ({@link
     * Start#commandsFrom}): fixed at the job's first start, kept for good. Union list state of
     * (partition, offset) pairs.
     */
    static final ListStateDescriptor<long[]> COMMANDS_FROM =
            new ListStateDescriptor<>(
                    "commands-from-v1",
                    org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo
                            .LONG_PRIMITIVE_ARRAY_TYPE_INFO);

    private final ListState<String> configState;
    private final ListState<long[]> commandsFromState;
    private final Map<Integer, Long> commandsFrom = new TreeMap<>();
    private final ListState<Long> horizonState;
    private final BroadcastState<String, String> segmentsState;
    private final BroadcastState<Integer, String> waitingState;
    private final SegmentLoads loads;
    private final ControlHandler control;
    private long sweptHorizon = Long.MIN_VALUE;
    private final ListState<Boolean> lifetimeState;
    private boolean lifetimeCounting;

    /**
     * What the control side starts from besides its state.
     *
     * @param initialConfig the config given at start ({@code --limits})
     * @param initialSegmentsJson a JSON array of full loads in force before the first message, or
     *     null
     * @param segmentLoader where segment files are read from
     * @param commandsFrom for a start without state: per config-topic partition, the offset its
     *     commands are applied from
     */
    public record Start(
            LimitConfig initialConfig,
            String initialSegmentsJson,
            FlinkFileLoader segmentLoader,
            Map<Integer, Long> commandsFrom) {}

    /**
     * @param restored whether the job started from a checkpoint or savepoint
     */
    public ControlInput(OperatorStateStore store, Start settings, boolean restored)
            throws Exception {
        configState = store.getUnionListState(CONFIG_IN_FORCE);
        commandsFromState = store.getUnionListState(COMMANDS_FROM);
        for (long[] pair : commandsFromState.get()) {
            commandsFrom.merge((int) pair[0], pair[1], Math::max);
        }
        if (!restored) {
            // A start without state: the commands already on the topic were for state this job
            // does not have. A restored job keeps its first start's offsets (none for a job
            // of a version before them: it applies every command it reads, as it did).
            commandsFrom.putAll(settings.commandsFrom());
            if (!commandsFrom.isEmpty()) {
                LOG.info(
                        "Started without state: commands on the config topic before offsets {}"
                                + " (partition=offset) are not applied",
                        commandsFrom);
            }
        }
        horizonState = store.getUnionListState(SWEPT_HORIZON);
        for (Long h : horizonState.get()) {
            sweptHorizon = Math.max(sweptHorizon, h);
        }
        lifetimeState = store.getUnionListState(LIFETIME_COUNTING);
        for (Boolean on : lifetimeState.get()) {
            lifetimeCounting |= on;
        }
        segmentsState = store.getBroadcastState(ControlState.SEGMENTS);
        waitingState = store.getBroadcastState(ControlState.WAITING);
        loads = new SegmentLoads(settings.segmentLoader(), Thread::sleep);
        TreeMap<Integer, String> waiting = new TreeMap<>();
        for (Map.Entry<Integer, String> e : waitingState.entries()) {
            waiting.put(e.getKey(), e.getValue());
        }
        loads.restore(waiting.values());
        Map<String, String> descriptors = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : segmentsState.entries()) {
            descriptors.put(e.getKey(), e.getValue());
        }
        control =
                ControlHandler.start(
                        settings.initialConfig(),
                        configState.get(),
                        descriptors,
                        settings.initialSegmentsJson() == null
                                ? List.of()
                                : ControlHandler.initialSegments(settings.initialSegmentsJson()),
                        settings.segmentLoader(),
                        LOG::warn);
        if (settings.initialSegmentsJson() != null) {
            segmentsState.clear();
            segmentsState.putAll(control.segments().descriptors());
        }
        lifetimeCounting |= control.config().hasLifetime();
        LOG.info("Limit config version {} is in force", control.config().version());
    }

    /** Whether lifetime counts are kept: a config with a lifetime limit has been in force. */
    public boolean lifetimeCounting() {
        return lifetimeCounting;
    }

    public ControlHandler handler() {
        return control;
    }

    public LimitConfig config() {
        return control.config();
    }

    public long sweptHorizon() {
        return sweptHorizon;
    }

    /** Moves the swept horizon forward (never back). */
    public void sweptTo(long horizon) {
        sweptHorizon = Math.max(sweptHorizon, horizon);
    }

    public void snapshot() throws Exception {
        configState.update(List.of(control.config().json()));
        List<long[]> pairs = new ArrayList<>();
        commandsFrom.forEach((p, o) -> pairs.add(new long[] {p, o}));
        commandsFromState.update(pairs);
        horizonState.update(List.of(sweptHorizon));
        lifetimeState.update(List.of(lifetimeCounting));
        waitingState.clear();
        List<String> pending = loads.pending();
        for (int i = 0; i < pending.size(); i++) {
            waitingState.put(i, pending.get(i));
        }
    }

    /** A control record and what applying it did. */
    public record Applied(ControlRecord record, Outcome outcome) {}

    /**
     * Takes a control record: applied at once, or (a segment whose file loads off the task thread)
     * kept waiting, while the segments held decide meanwhile.
     *
     * @return what was done, in order: the outcomes of waiting records now loaded, then the
     *     record's own (none while it waits)
     */
    public List<Applied> take(ControlRecord rec) throws Exception {
        List<Applied> done = applyLoaded();
        if (loads.mustWait(rec)) {
            loads.add(rec);
        } else {
            done = done.isEmpty() ? new ArrayList<>(1) : done;
            done.add(apply(rec));
        }
        return done;
    }

    /** The outcomes of the waiting segment records whose files are loaded, applied in order. */
    public List<Applied> applyLoaded() throws Exception {
        if (loads.isEmpty()) {
            return List.of();
        }
        List<Applied> done = new ArrayList<>();
        ControlRecord rec;
        while ((rec = loads.ready()) != null) {
            done.add(apply(rec));
            loads.applied();
        }
        return done;
    }

    private Applied apply(ControlRecord rec) throws Exception {
        Outcome outcome = control.apply(rec);
        if (isCommand(outcome) && rec.offset() < commandsFrom.getOrDefault(rec.partition(), 0L)) {
            LOG.info(
                    "Command at {}-{}@{} was on the topic before this job started without state:"
                            + " not applied",
                    rec.topic(),
                    rec.partition(),
                    rec.offset());
            return new Applied(rec, new Outcome.Skipped("on the topic before a stateless start"));
        }
        if (outcome instanceof Outcome.SegmentApplied s) {
            segmentsState.put(s.segmentId(), s.descriptor());
            LOG.info("Segment {} version {} applied", s.segmentId(), s.version());
        } else if (outcome instanceof Outcome.ConfigApplied c) {
            LOG.info("Limit config version {} is in force", c.config().version());
            if (c.config().hasLifetime() && !lifetimeCounting) {
                lifetimeCounting = true;
                LOG.info("Lifetime limits are in force: lifetime counts are kept from now on");
            }
        } else if (outcome instanceof Outcome.NotApplied n && n.cause() != null) {
            LOG.error(
                    "Control record {}-{}@{} not applied",
                    rec.topic(),
                    rec.partition(),
                    rec.offset(),
                    n.cause());
        }
        return new Applied(rec, outcome);
    }

    private static boolean isCommand(Outcome o) {
        return o instanceof Outcome.ForgetUser
                || o instanceof Outcome.CancelHeld
                || o instanceof Outcome.EndCampaign
                || o instanceof Outcome.Command;
    }

    @Override
    public void close() {
        loads.close();
        control.close(); // gives back this task's share of the cached bitmaps
    }
}
