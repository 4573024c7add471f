package io.freqcap.operators;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.AuditEvent;
import io.freqcap.schema.AuditRecords;
import io.freqcap.schema.ConfigRecord;
import io.freqcap.schema.ControlRecord;
import io.freqcap.schema.Decision;
import io.freqcap.schema.Delivery;
import io.freqcap.schema.InboundMessage;
import io.freqcap.schema.Json;
import io.freqcap.schema.LimitConfig;
import io.freqcap.schema.MalformedRecordException;
import io.freqcap.schema.MirrorWrite;
import io.freqcap.schema.OutboundMessage;
import io.freqcap.schema.SegmentUpdate;
import io.freqcap.schema.UserHistory;
import io.freqcap.schema.UserHistorySerializer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.BroadcastState;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.ExceptionUtils;
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
 * to it. Once messages arrive a longest window W past the latest counted one, none does. A periodic
 * sweep ({@link ControlRecord.Kind#SWEEP}, broadcast to every instance) therefore clears each
 * history whose latest counted message is 2W or more behind the watermark (the extra W is slack for
 * late messages). A sweep rather than a timer per user: timers cost a RocksDB write on a user's
 * first message and about 8 bytes of state per user, for nothing a sweep cannot do. A sweep visits
 * every key of the instance, about a second per million users, every few minutes. Event time, not
 * state TTL: TTL only knows processing time, and decisions are made on message time, which a
 * backfill or a replay can move far from the wall clock; and TTL is fixed when the job starts while
 * W changes with every config.
 *
 * <p><b>History cache.</b> A {@link HistoryCache} of each instance holds the serialized histories
 * of recently seen users: a hit saves the RocksDB read (3–4 µs of the ~9 µs a message cost this
 * task in the end-to-end benchmark). Run by a {@link CappingOperator} (as the job does), new
 * histories stay in the cache and reach keyed state in {@link #snapshotState}, which Flink calls
 * before the keyed state backend's snapshot, and before a sweep or a rebuild scans keyed state; run
 * by Flink's plain keyed-broadcast operator, the cache is written through.
 *
 * <p><b>Redis mirror.</b> With the mirror on, every ALLOWED message also goes to {@link #MIRROR}
 * (for {@link RedisMirrorSink}), and histories keep messageIds, so that a {@code rebuild-mirror}
 * command can write every user's counted messages again (SPEC §7). Decisions never wait on Redis.
 */
public class CappingFunction
        extends KeyedBroadcastProcessFunction<Long, InboundMessage, ControlRecord, Delivery>
        implements CheckpointedFunction {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(CappingFunction.class);

    public static final OutputTag<AuditEvent> AUDIT =
            new OutputTag<>("capping-audit", TypeInformation.of(AuditEvent.class));

    /** Counted messages for the Redis mirror (only when the mirror is on). */
    public static final OutputTag<MirrorWrite> MIRROR =
            new OutputTag<>("redis-mirror", TypeInformation.of(MirrorWrite.class));

    public static final ValueStateDescriptor<UserHistory> HISTORY =
            new ValueStateDescriptor<>("history-v1", UserHistorySerializer.INSTANCE);

    /**
     * The config in force, as JSON text. Union list state: every instance holds the same config,
     * and after a restore (at any parallelism) each takes the highest version it finds, so neither
     * a rescale nor a restart with an older {@code --limits} can lower the version in force.
     */
    public static final ListStateDescriptor<String> CONFIG_IN_FORCE =
            new ListStateDescriptor<>("limit-config-v1", Types.STRING);

    /**
     * Whether this task owes the Redis mirror a rebuild: its writer dropped writes (Redis away past
     * --redis-max-backlog) and the rebuild has not run yet. Union state: after a restore at any
     * parallelism, if any task owed one, every task rebuilds (harmless: a rebuild is idempotent).
     */
    public static final ListStateDescriptor<Boolean> MIRROR_REBUILD_OWED =
            new ListStateDescriptor<>("mirror-rebuild-owed-v1", Types.BOOLEAN);

    private final String initialConfigJson;
    private final String initialSegmentsJson;
    private final boolean mirror;
    private final int historyCacheSlots;
    private final Bounds bounds;

    private transient LimitConfig config;
    private transient FlinkFileLoader loader;
    private transient SegmentTable segments;
    private transient ListState<String> configState;
    private transient ListState<Boolean> rebuildOwedState;
    private transient boolean rebuildOwed;
    private transient MirrorLink link;
    private transient boolean auditsControl;
    private transient ValueState<UserHistory> history;
    private transient HistoryCache cache;
    private transient DataOutputSerializer cacheOut;
    private transient DataInputDeserializer cacheIn;
    private transient byte[] cacheBuffer;
    private transient Counter cacheHits;

    /** Set by {@link CappingOperator}: histories are then written to keyed state at checkpoints. */
    private transient java.util.function.LongConsumer keySetter;

    private transient Counter allowed;
    private transient Counter exempt;
    private transient Counter rejected;
    private transient Counter duplicate;
    private transient Counter stale;
    private transient Counter malformed;
    private transient Counter invalidControl;
    private transient Counter cleared;

    /**
     * @param initialConfigJson the config given at start; in force until a higher version arrives
     */
    public CappingFunction(String initialConfigJson) {
        this(initialConfigJson, null);
    }

    /**
     * @param initialSegmentsJson a JSON array of full loads in force before the first message, or
     *     null
     */
    public CappingFunction(String initialConfigJson, String initialSegmentsJson) {
        this(initialConfigJson, initialSegmentsJson, false);
    }

    /**
     * @param mirror emit counted messages to {@link #MIRROR} and keep their ids for rebuilds
     */
    public CappingFunction(String initialConfigJson, String initialSegmentsJson, boolean mirror) {
        this(initialConfigJson, initialSegmentsJson, mirror, DEFAULT_HISTORY_CACHE_SLOTS);
    }

    /** Slots of each instance's {@link HistoryCache} unless told otherwise (about 72 MB full). */
    public static final int DEFAULT_HISTORY_CACHE_SLOTS = 1 << 20;

    public static final int MAX_HISTORY_CACHE_SLOTS = HistoryCache.MAX_SLOTS;

    /**
     * @param historyCacheSlots slots of the history cache of each parallel instance (rounded up to
     *     a power of two), 0 for none
     */
    public CappingFunction(
            String initialConfigJson,
            String initialSegmentsJson,
            boolean mirror,
            int historyCacheSlots) {
        this(initialConfigJson, initialSegmentsJson, mirror, historyCacheSlots, Bounds.DEFAULTS);
    }

    /**
     * @param bounds the largest output record; where and how much segment files are read from
     */
    public CappingFunction(
            String initialConfigJson,
            String initialSegmentsJson,
            boolean mirror,
            int historyCacheSlots,
            Bounds bounds) {
        if (historyCacheSlots < 0 || historyCacheSlots > MAX_HISTORY_CACHE_SLOTS) {
            throw new IllegalArgumentException(
                    "history cache slots must be 0.."
                            + MAX_HISTORY_CACHE_SLOTS
                            + ", got "
                            + historyCacheSlots);
        }
        this.initialConfigJson = initialConfigJson;
        this.initialSegmentsJson = initialSegmentsJson;
        this.mirror = mirror;
        this.historyCacheSlots = historyCacheSlots;
        this.bounds = bounds;
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        config = LimitConfig.parse(initialConfigJson);
        loader = bounds.segmentLoader();
        configState = context.getOperatorStateStore().getUnionListState(CONFIG_IN_FORCE);
        for (String json : configState.get()) {
            LimitConfig restored = LimitConfig.parse(json);
            if (restored.version() > config.version()) {
                config = restored;
            }
        }
        LOG.info("Limit config version {} is in force", config.version());
        rebuildOwedState = context.getOperatorStateStore().getUnionListState(MIRROR_REBUILD_OWED);
        for (Boolean owed : rebuildOwedState.get()) {
            rebuildOwed |= owed;
        }
        if (rebuildOwed) {
            LOG.info("The Redis mirror is owed a rebuild: it runs once Redis answers");
        }

        BroadcastState<String, String> held =
                context.getOperatorStateStore().getBroadcastState(ControlState.SEGMENTS);
        Map<String, String> descriptors = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : held.entries()) {
            descriptors.put(e.getKey(), e.getValue());
        }
        List<String> problems = new ArrayList<>();
        segments = SegmentTable.restore(descriptors, loader, problems);
        problems.forEach(pr -> LOG.error("Restoring segments: {}", pr));
        if (initialSegmentsJson != null) {
            for (SegmentUpdate u : initialSegments(initialSegmentsJson)) {
                String error = segments.apply(u, loader);
                if (error != null) {
                    // Restored state may hold newer versions; anything else was checked at start.
                    LOG.info("Initial segment {} not applied: {}", u.segmentId(), error);
                }
            }
            held.clear();
            held.putAll(segments.descriptors());
        }
    }

    /** Parses the --segments file: a JSON array of full loads. */
    public static List<SegmentUpdate> initialSegments(String json) throws MalformedRecordException {
        JsonNode root;
        try {
            root = Json.MAPPER.readTree(json);
        } catch (IOException e) {
            throw new MalformedRecordException("not valid JSON: " + e.getMessage());
        }
        if (root == null || !root.isArray()) {
            throw new MalformedRecordException("expected a JSON array of full loads");
        }
        List<SegmentUpdate> out = new ArrayList<>();
        for (int i = 0; i < root.size(); i++) {
            SegmentUpdate u;
            try {
                u = SegmentUpdate.fromTree(root.get(i));
            } catch (MalformedRecordException e) {
                throw new MalformedRecordException("[" + i + "]: " + e.getMessage());
            }
            if (u.op() != SegmentUpdate.Op.LOAD) {
                throw new MalformedRecordException(
                        "[" + i + "]: only full loads (uri or bitmap) are allowed");
            }
            out.add(u);
        }
        return out;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        flush(); // before the keyed state backend takes its snapshot
        configState.update(List.of(config.json()));
        noteMirrorDrops();
        rebuildOwedState.update(rebuildOwed ? List.of(true) : List.of());
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        history = getRuntimeContext().getState(HISTORY);
        cache = new HistoryCache(historyCacheSlots);
        cacheOut = new DataOutputSerializer(128);
        cacheIn = new DataInputDeserializer();
        cacheBuffer = new byte[HistoryCache.MAX_BYTES];
        auditsControl = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0;
        if (mirror) {
            link =
                    MirrorLink.acquire(
                            getRuntimeContext().getJobInfo().getJobId().toString(),
                            getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                            getRuntimeContext().getTaskInfo().getAttemptNumber());
        }
        MetricGroup metrics = getRuntimeContext().getMetricGroup();
        allowed = metrics.counter("allowed");
        exempt = metrics.counter("exempt");
        rejected = metrics.counter("rejected");
        duplicate = metrics.counter("duplicate");
        stale = metrics.counter("stale");
        malformed = metrics.counter("malformed");
        invalidControl = metrics.counter("invalidControl");
        cleared = metrics.counter("historiesCleared");
        cacheHits = metrics.counter("historyCacheHits");
        metrics.gauge("configVersion", () -> config.version());
        metrics.gauge("segments", () -> segments.size());
        metrics.gauge("segmentBytes", () -> segments.bytes());
    }

    @Override
    public void close() throws Exception {
        if (segments != null) {
            segments.close(); // gives back this task's share of the cached bitmaps
        }
        if (link != null) {
            link.release();
            link = null;
        }
        super.close();
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
                            in.offset(),
                            bounds.maxRecordBytes()));
            return;
        }
        LimitConfig cfg = config;
        OutboundMessage m = in.message();
        UserHistory before = history(m.userId());
        String segment = segments.resolve(m.userId(), cfg);
        CappingRule.Verdict v = CappingRule.decide(before, m, cfg, segment, mirror);
        switch (v.decision()) {
            case ALLOWED:
                allowed.inc();
                record(m.userId(), v.history());
                out.collect(delivery(in, m, v, cfg));
                if (mirror) {
                    // Every channel the user may have in Redis: the write trims them all.
                    ctx.output(
                            MIRROR,
                            MirrorWrite.of(
                                    m.userId(),
                                    cfg.longestWindowMillis(),
                                    m.messageId(),
                                    m.timestamp(),
                                    m.channel(),
                                    before.channels()));
                    noteMirrorDrops(); // the chained writer drops within output()
                }
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
                                in.value(),
                                bounds.maxRecordBytes()));
        }
    }

    /** The user's history (the current key's), from the cache when it holds it. */
    private UserHistory history(long user) throws Exception {
        int length = cache.get(user, cacheBuffer);
        if (length > 0) {
            cacheHits.inc();
            cacheIn.setBuffer(cacheBuffer, 0, length);
            return UserHistorySerializer.INSTANCE.deserialize(cacheIn);
        }
        UserHistory h = history.value();
        if (h == null) {
            h = UserHistory.EMPTY;
        }
        cache(user, h);
        return h;
    }

    /** Writes the user's new history: to the cache only when it can hold it until the flush. */
    private void record(long user, UserHistory h) throws Exception {
        if (keySetter != null && cache.slots() > 0) {
            serializeForCache(h);
            if (cache.putDirty(user, cacheOut.getSharedBuffer(), cacheOut.length())) {
                return;
            }
            history.update(h);
            return;
        }
        history.update(h);
        cache(user, h);
    }

    /** Called by {@link CappingOperator} before the first record: write back at checkpoints. */
    void writeBackThrough(java.util.function.LongConsumer setCurrentKey) {
        this.keySetter = setCurrentKey;
    }

    /** Writes the histories only the cache holds to keyed state (before a snapshot or a scan). */
    private void flush() throws Exception {
        if (keySetter == null) {
            return;
        }
        int maxParallelism = getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks();
        int n =
                cache.flushDirty(
                        u -> KeyGroupRangeAssignment.assignToKeyGroup(u, maxParallelism),
                        (user, bytes, offset, length) -> {
                            keySetter.accept(user);
                            cacheIn.setBuffer(bytes, offset, length);
                            history.update(UserHistorySerializer.INSTANCE.deserialize(cacheIn));
                        });
        LOG.debug("Wrote {} cached histories to keyed state", n);
    }

    private void cache(long user, UserHistory h) throws IOException {
        if (cache.slots() > 0) {
            serializeForCache(h);
            cache.put(user, cacheOut.getSharedBuffer(), cacheOut.length());
        }
    }

    private void serializeForCache(UserHistory h) throws IOException {
        cacheOut.clear();
        UserHistorySerializer.INSTANCE.serialize(h, cacheOut);
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
     * Clears every history of this instance that nothing can need any more: its latest counted
     * message is at least twice the longest window behind the watermark.
     */
    private void sweep(Context ctx) throws Exception {
        flush(); // the scan below reads keyed state
        long watermark = ctx.currentWatermark();
        long longest = config.longestWindowMillis();
        if (watermark < Long.MIN_VALUE + 2 * longest) {
            return; // no event time yet
        }
        long before = watermark - 2 * longest;
        long[] count = {0};
        ctx.applyToKeyedState(
                HISTORY,
                (user, state) -> {
                    UserHistory h = state.value();
                    if (h != null && (h.isEmpty() || h.latest() <= before)) {
                        state.clear();
                        count[0]++;
                    }
                });
        cache.clear(); // it may hold what was just cleared
        cleared.inc(count[0]);
        LOG.debug("Sweep at watermark {} cleared {} histories", watermark, count[0]);
    }

    @Override
    public void processBroadcastElement(ControlRecord rec, Context ctx, Collector<Delivery> out)
            throws Exception {
        if (mirror) {
            rebuildMirrorIfOwed(ctx);
        }
        if (rec.kind() == ControlRecord.Kind.SWEEP) {
            sweep(ctx);
            return;
        }
        if (rec.kind() == ControlRecord.Kind.MIRROR_TICK) {
            return;
        }
        String error;
        try {
            error = apply(rec, ctx);
        } catch (MalformedRecordException e) {
            error = e.getMessage();
        } catch (Throwable e) {
            // Whatever a control record makes go wrong (a broken file-system plugin, a bug), it
            // must not fail the task: a restarted task reads the same record again, and fails
            // again, for ever. Only errors the JVM cannot go on after are let through.
            ExceptionUtils.rethrowIfFatalErrorOrOOM(e);
            LOG.error(
                    "Control record {}-{}@{} not applied",
                    rec.topic(),
                    rec.partition(),
                    rec.offset(),
                    e);
            error = "not applied: " + e.getClass().getSimpleName() + " while applying it";
        }
        if (error != null && auditsControl) {
            invalidControl.inc();
            ctx.output(
                    AUDIT,
                    AuditRecords.unreadable(
                            Decision.INVALID_CONTROL,
                            error,
                            rec.value(),
                            rec.topic(),
                            rec.partition(),
                            rec.offset(),
                            bounds.maxRecordBytes()));
        }
    }

    /** Applies a config, segment update or command; returns null, or why it was not applied. */
    private String apply(ControlRecord rec, Context ctx) throws Exception {
        if (rec.kind() == ControlRecord.Kind.SEGMENT) {
            SegmentUpdate u = SegmentUpdate.parse(rec.value());
            String error = segments.apply(u, loader);
            if (error != null) {
                return error;
            }
            ctx.getBroadcastState(ControlState.SEGMENTS)
                    .put(u.segmentId(), segments.descriptor(u.segmentId()));
            LOG.info("Segment {} version {} applied ({})", u.segmentId(), u.version(), u.op());
            return null;
        }
        ConfigRecord parsed = ConfigRecord.parse(rec.value());
        if (parsed instanceof ConfigRecord.Command c) {
            applyCommand(c, ctx);
            return null;
        }
        LimitConfig next = (LimitConfig) parsed;
        if (next.version() <= config.version()) {
            return "stale version: "
                    + next.version()
                    + " is not greater than the version in force, "
                    + config.version();
        }
        config = next;
        LOG.info("Limit config version {} is in force", next.version());
        return null;
    }

    /** Remembers (in state, at the next checkpoint) that the mirror's writer dropped writes. */
    private void noteMirrorDrops() {
        if (link != null && link.takeDropped()) {
            if (!rebuildOwed) {
                LOG.warn("Redis mirror dropped writes: a rebuild is owed once Redis answers");
            }
            rebuildOwed = true;
        }
    }

    /** Rebuilds the mirror if its writer dropped writes and Redis answers again. */
    private void rebuildMirrorIfOwed(Context ctx) throws Exception {
        noteMirrorDrops();
        if (!rebuildOwed || !link.redisAnswered()) {
            return;
        }
        rebuildOwed = false;
        link.startRebuild();
        try {
            rebuildMirror(ctx);
        } finally {
            link.endRebuild();
        }
        noteMirrorDrops(); // dropped again during the rebuild: owed again
    }

    private void applyCommand(ConfigRecord.Command c, Context ctx) throws Exception {
        if (!ConfigRecord.Command.REBUILD_MIRROR.equals(c.name())) {
            throw new MalformedRecordException("unknown command \"" + c.name() + "\"");
        }
        if (!mirror) {
            LOG.info("rebuild-mirror received; this job runs without a Redis mirror");
            return;
        }
        rebuildMirror(ctx);
    }

    /**
     * Writes every user's counted messages of the last longest window again, each user's keys
     * replaced at once, so Redis holds what this instance counted whatever it had lost.
     */
    private void rebuildMirror(Context ctx) throws Exception {
        long window = config.longestWindowMillis();
        flush();
        long[] users = {0, 0, 0};
        ctx.applyToKeyedState(
                HISTORY,
                (user, state) -> {
                    UserHistory h = state.value();
                    if (h == null || h.isEmpty()) {
                        return;
                    }
                    MirrorWrite w = rebuildWrite(user, h, window);
                    if (w == null) {
                        users[2]++;
                        return;
                    }
                    ctx.output(MIRROR, w);
                    users[0]++;
                    users[1] += w.size();
                });
        LOG.info(
                "rebuild-mirror: {} users, {} counted messages written again ({} users counted"
                        + " while the mirror was off, without messageIds, left as they are)",
                users[0],
                users[1],
                users[2]);
    }

    /** The replacing write of one user's counted messages within the window, or null if none. */
    static MirrorWrite rebuildWrite(long user, UserHistory h, long window) {
        long from = h.latest() - window;
        String[] channels = h.channels();
        List<String> channelList = Arrays.asList(channels);
        int n = 0;
        for (int i = 0; i < h.size(); i++) {
            if (h.timestamp(i) >= from && h.messageId(i) != null) {
                n++;
            }
        }
        if (n == 0) {
            return null;
        }
        int[] channelOf = new int[n];
        long[] ts = new long[n];
        String[] ids = new String[n];
        int k = 0;
        for (int i = 0; i < h.size(); i++) {
            if (h.timestamp(i) >= from && h.messageId(i) != null) {
                channelOf[k] = channelList.indexOf(h.channel(i));
                ts[k] = h.timestamp(i);
                ids[k++] = h.messageId(i);
            }
        }
        return new MirrorWrite(user, window, true, channels, channelOf, ts, ids);
    }
}
