package io.freqcap.operators.capping;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.capping.EdgeLedger.Held;
import io.freqcap.operators.capping.EdgeLedger.Pair;
import io.freqcap.operators.capping.held.HeldMessages;
import io.freqcap.operators.segments.FlinkFileLoader;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.ConfigRecord;
import io.freqcap.schema.config.ConfigTopic;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.config.QuietHours;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.edges.EdgeInput;
import io.freqcap.schema.edges.EdgeSequence;
import io.freqcap.schema.edges.EdgeSequence.Advance;
import io.freqcap.schema.edges.EdgeSequence.Crash;
import io.freqcap.schema.edges.EdgeSequence.Input;
import io.freqcap.schema.edges.EdgeSequence.Restore;
import io.freqcap.schema.edges.EdgeSequence.Step;
import io.freqcap.schema.edges.EdgeSequence.Sweep;
import io.freqcap.schema.edges.FuzzReport;
import io.freqcap.schema.edges.Validity;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldKey;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.message.FutureBound;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.message.RawRecord;
import io.freqcap.schema.mirror.MirrorLog;
import io.freqcap.schema.mirror.MirrorWrite;
import io.freqcap.schema.preference.PreferenceRecord;
import io.freqcap.schema.preference.UserPreferences;
import io.freqcap.schema.receipt.DeliveryReceipt;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;

/**
 * Runs one {@link EdgeSequence} through the capping operator in Flink's harness on RocksDB, one
 * task or two, each keyed record routed to the task that owns its key and each control record to
 * every task, as the job wires them; snapshots, restores (rescaled) and crashes (a restart from the
 * latest checkpoint, what was written since rolled back) in between. After every step it checks
 * what the contract promises of what came out, against a ledger of what the outputs so far say:
 *
 * <ul>
 *   <li>each message has one outcome (§5), now or, held, later: released at the send time it was
 *       held for, or withdrawn (FORGOTTEN, PREEMPTED, CANCELLED) once; what waits is what held
 *       state holds and what {@code heldNow} counts, nothing past its send time;
 *   <li>no user has more than {@code maxHeld} waiting (§3); a held message's send time lies after
 *       its timestamp, within its rule's {@code hold}, outside its quiet hours in its zone (§6);
 *   <li>no interval of a rolling limit's window holds more counted messages than its max (§6);
 *   <li>{@code forget-user}, {@code cancel-held}, an opt-out and a pause leave none of what they
 *       withdraw waiting (§7, §10); {@code retryAfter} is null where no time would pass (§10);
 *   <li>no output record over {@code --max-record-bytes}, every audit record JSON (§5);
 *   <li>records the contract calls valid are read, those it calls invalid refused; no failure is
 *       swallowed into an INVALID_CONTROL record ("not applied: ...");
 *   <li>with the Redis mirror on, Redis as the mirror's writes leave it ({@link MirrorModel},
 *       flushed after every step) holds, for every user, exactly the log of what the task counts
 *       (§7: {@link MirrorLog#of} of its history and the longest window in force when the key was
 *       written), each key with an expiry, no key for a user who counts nothing.
 * </ul>
 *
 * <p>A broken promise is a {@link Broken} with a short signature that names it, so that the
 * failures of many sequences group by cause; an exception from the operator ends the run with its
 * class and the first freqcap frame it came from.
 */
final class EdgeRun implements AutoCloseable {
    static final int MAX_PARALLELISM = 128;

    /** A promise of the contract that one step broke. */
    static final class Broken extends RuntimeException {
        final String signature;

        Broken(String signature, String detail) {
            super(signature + ": " + detail);
            this.signature = signature;
        }
    }

    /** Where and why a run failed. */
    record Failure(String signature, int step, Throwable cause) {
        String describe() {
            return signature + " (at step " + step + ")";
        }
    }

    private final EdgeSequence sequence;
    private final CappingHarnesses harnesses = new CappingHarnesses();
    private final List<
                    KeyedBroadcastOperatorTestHarness<
                            Long, InboundMessage, ControlRecord, Delivery>>
            tasks = new ArrayList<>();
    private final int maxRecordBytes;
    private final FutureBound maxFuture;
    private CappingSettings settings;
    private int parallelism = 1;
    private long clock;
    private long checkpoint;
    private long sweeps;
    private int at = -1;
    private final Map<String, Failure> soft = new LinkedHashMap<>();

    private EdgeLedger ledger = new EdgeLedger();

    /**
     * Redis, as the mirror's writes leave it: never rolled back (a crash does not undo what the
     * failed attempt wrote).
     */
    private final MirrorModel redis = new MirrorModel();

    /**
     * The held topic a start reads (every run writes one): only a start without state reads it, and
     * each run starts on an empty topic.
     */
    private final io.freqcap.operators.capping.outputs.HeldNotices.LiveKeys liveKeys =
            (ownsUser, ownsOthers) ->
                    io.freqcap.operators.capping.outputs.HeldNotices.Start.of(List.of());

    /** Outcomes seen, by kind, over every run that shares the map: how deep the runs reach. */
    private final Map<String, Long> tally;

    EdgeRun(EdgeSequence sequence) {
        this(sequence, new HashMap<>());
    }

    EdgeRun(EdgeSequence sequence, Map<String, Long> tally) {
        this.sequence = sequence;
        this.tally = tally;
        this.maxRecordBytes = sequence.start().maxRecordBytes();
        this.maxFuture = FutureBound.parse(sequence.start().maxFuture());
        this.clock = sequence.start().clock();
    }

    /**
     * Runs every step, then lets the clock run out: the promises broken, each once, in the order
     * they were first broken. A broken promise that leaves the outputs' count whole (a record
     * refused that should be read, one too large) lets the run go on, to find more; an exception,
     * or a count that no longer adds up, ends it.
     */
    List<Failure> run() {
        List<Failure> out = new ArrayList<>();
        try {
            open();
            List<Step> steps = sequence.steps();
            for (at = 0; at < steps.size(); at++) {
                if (steps.get(at) instanceof Crash) {
                    crash(at);
                } else {
                    step(steps.get(at), at);
                }
            }
            at = steps.size();
            finish();
        } catch (Broken b) {
            soft.putIfAbsent(b.signature, new Failure(b.signature, at, b));
        } catch (Throwable t) {
            soft.putIfAbsent(FuzzReport.signature(t), new Failure(FuzzReport.signature(t), at, t));
        } finally {
            try {
                close();
            } catch (Exception ignored) {
                // a harness that failed may fail to close too; the first failure is the one
            }
        }
        out.addAll(soft.values());
        return out;
    }

    /** A promise broken that leaves the outputs' count whole: noted once, and the run goes on. */
    private void soft(String signature, String detail) {
        soft.putIfAbsent(signature, new Failure(signature, at, new Broken(signature, detail)));
    }

    /**
     * Whether a cancel-held names this held message (contract.md §7), read from the contract here
     * rather than from the job's own predicate.
     */
    private static boolean names(ConfigRecord.CancelHeld c, Held h) {
        boolean user = c.userId() == null || c.userId() == h.user();
        boolean campaign = c.campaignId() == null || c.campaignId().equals(h.campaign());
        boolean message = c.messageId() == null || c.messageId().equals(h.messageId());
        return user && campaign && message;
    }

    // ---- setup

    private void open() throws Exception {
        EdgeSequence.Start s = sequence.start();
        try {
            settings = CappingSettings.of(LimitConfig.parse(s.initialConfig()));
        } catch (MalformedRecordException e) {
            throw new Broken(
                    "valid initial config refused: " + field(e.getMessage()),
                    e.getMessage() + " in " + s.initialConfig());
        }
        ledger.lifetimeRetention =
                io.freqcap.schema.lifetime.LifetimeCount.parseRetention(s.lifetimeRetention());
        ledger.inForce(settings.initialConfig());
        settings =
                settings.withSegments(s.initialSegments())
                        .withHeldTopic(liveKeys)
                        .withMirror(s.mirror())
                        .withHistoryCache(s.historyCacheSlots())
                        .withLiveHistoryBytes(s.liveHistoryBytes())
                        .withBounds(
                                new Bounds(
                                        maxRecordBytes,
                                        FlinkFileLoader.DEFAULT_MAX_BYTES,
                                        List.of(),
                                        maxFuture,
                                        ledger.lifetimeRetention));
        openTasks(null, 1);
    }

    private void openTasks(OperatorSubtaskState merged, int newParallelism) throws Exception {
        for (int i = 0; i < newParallelism; i++) {
            OperatorSubtaskState restore =
                    merged == null
                            ? null
                            : AbstractStreamOperatorTestHarness.repartitionOperatorState(
                                    merged, MAX_PARALLELISM, parallelism, newParallelism, i);
            var h = harnesses.open(settings, restore, newParallelism, i);
            tasks.add(h);
        }
        parallelism = newParallelism;
        for (var h : tasks) {
            h.setProcessingTime(clock); // restored timers already due fire now
        }
        released(drain(), "a restore");
        checkHeldNow();
    }

    @Override
    public void close() throws Exception {
        tasks.clear();
        harnesses.close();
    }

    private KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> task(
            long key) {
        return tasks.get(
                KeyGroupRangeAssignment.assignKeyToParallelOperator(
                        key, MAX_PARALLELISM, parallelism));
    }

    // ---- steps

    /** One step; {@code index} is also the offset an input is read at (the same when replayed). */
    private void step(Step step, int index) throws Exception {
        if (step instanceof Input i) {
            input(i.input(), index);
        } else if (step instanceof Advance a) {
            advance(a.to());
        } else if (step instanceof Restore r) {
            restore(r.parallelism(), index);
        } else if (step instanceof Sweep s) {
            sweep(s.watermark());
        }
        checkHeldNow();
        checkHeldState();
        EdgeLimits.check(ledger, this::soft);
        checkMirror(step instanceof Sweep);
    }

    private void advance(long to) throws Exception {
        clock = Math.max(clock, to);
        for (var h : tasks) {
            h.setProcessingTime(clock);
        }
        released(drain(), "the clock moving on");
    }

    /** The latest checkpoint: the tasks' state, the ledger then, the step it was taken at. */
    private record Checkpoint(
            OperatorSubtaskState state, int parallelism, EdgeLedger ledger, int step) {}

    private Checkpoint latest;

    private void restore(int newParallelism, int index) throws Exception {
        List<OperatorSubtaskState> snapshots = new ArrayList<>();
        checkpoint++;
        for (var h : tasks) {
            snapshots.add(h.snapshot(checkpoint, clock));
        }
        released(drain(), "a snapshot"); // none: a snapshot sends nothing
        OperatorSubtaskState merged =
                AbstractStreamOperatorTestHarness.repackageState(
                        snapshots.toArray(new OperatorSubtaskState[0]));
        latest = new Checkpoint(merged, parallelism, ledger.copy(), index);
        closeTasks();
        openTasks(merged, newParallelism);
    }

    /**
     * The job fails at step {@code index} and restarts from the latest checkpoint: what the tasks
     * wrote since is rolled back (the sinks' transactions abort), the ledger with it, and the steps
     * since are taken again, on a clock that has moved on meanwhile. Without a checkpoint yet,
     * nothing happens (a start without state is another story: §7, §8).
     */
    private void crash(int index) throws Exception {
        if (latest == null) {
            return;
        }
        Checkpoint from = latest;
        drain(); // written since the checkpoint, never committed
        closeTasks();
        ledger = from.ledger().copy();
        parallelism = from.parallelism();
        openTasks(from.state(), from.parallelism());
        // Redis keeps what the failed attempt wrote: it is ahead of the steps taken again until
        // they have all been taken (§7: exact after the recovery, not during it).
        replaying = true;
        try {
            for (int i = from.step() + 1; i < index; i++) {
                Step again = sequence.steps().get(i);
                if (!(again instanceof Crash)) {
                    step(again, i);
                }
            }
        } finally {
            replaying = false;
        }
        checkMirror(false);
    }

    /** Whether the steps since the latest checkpoint are being taken again after a crash. */
    private boolean replaying;

    private void closeTasks() throws Exception {
        for (var h : tasks) {
            harnesses.close(h);
        }
        tasks.clear();
    }

    private void sweep(long watermark) throws Exception {
        for (var h : tasks) {
            h.watermark(watermark);
            h.processBroadcastElement(ControlRecord.sweep(++sweeps), clock);
        }
        released(drain(), "a sweep");
    }

    private void input(EdgeInput e, long at) throws Exception {
        String topic = e.topic().defaultName;
        switch (e.topic()) {
            case MESSAGES -> {
                RawRecord raw = new RawRecord(e.key(), e.value(), topic, 0, at);
                InboundMessage in = InboundMessage.of(raw, maxRecordBytes, maxFuture, clock);
                task(in.routingKey()).processElement(in, clock);
                message(e, in, at, drain());
            }
            case PREFERENCES, RECEIPTS -> {
                RawRecord raw = new RawRecord(e.key(), e.value(), topic, 0, at);
                InboundMessage in =
                        e.topic() == EdgeInput.Topic.PREFERENCES
                                ? PreferenceRecord.inbound(raw)
                                : DeliveryReceipt.inbound(raw);
                task(in.routingKey()).processElement(in, clock);
                userInput(e, in, at, drain());
            }
            case CONFIG, SEGMENTS -> {
                ControlRecord rec =
                        new ControlRecord(
                                e.topic() == EdgeInput.Topic.CONFIG
                                        ? ControlRecord.Kind.CONFIG
                                        : ControlRecord.Kind.SEGMENT,
                                e.value(),
                                topic,
                                0,
                                at);
                for (var h : tasks) {
                    h.processBroadcastElement(rec, clock);
                }
                control(e, at, drain());
            }
        }
    }

    /** The end: the clock runs out, every held message goes, and each message had one outcome. */
    private void finish() throws Exception {
        advance(Long.MAX_VALUE);
        checkHeldNow();
        checkMirror(false); // releases count nothing new
        for (var h : tasks) {
            if (h.numProcessingTimeTimers() != 0) {
                throw new Broken(
                        "timers left after the clock ran out",
                        h.numProcessingTimeTimers() + " timers");
            }
        }
        for (Map.Entry<String, Pair> e : ledger.pairs.entrySet()) {
            Pair p = e.getValue();
            if (!p.waiting.isEmpty()) {
                throw new Broken(
                        "held message never released",
                        e.getKey() + ": " + p.waiting.size() + " still waiting at the end of time");
            }
            if (p.inputs != p.finals) {
                throw new Broken(
                        "not one outcome per message",
                        e.getKey() + ": " + p.inputs + " read, " + p.finals + " outcomes");
            }
        }
    }

    // ---- what came out

    /** The records one step made, every task's. */
    private record Out(List<Delivery> deliveries, List<JsonNode> audits) {
        List<JsonNode> audits(String decision) {
            return audits.stream().filter(a -> decision.equals(decision(a))).toList();
        }
    }

    static String decision(JsonNode a) {
        return a.path("decision").asText();
    }

    private Out drain() throws Exception {
        List<Delivery> deliveries = new ArrayList<>();
        List<JsonNode> audits = new ArrayList<>();
        for (var h : tasks) {
            // As before a checkpoint's barrier: the held topic's notices go out then (§12).
            h.prepareSnapshotPreBarrier(checkpoint);
            Object o;
            while ((o = h.getOutput().poll()) != null) {
                if (o instanceof StreamRecord<?> r
                        && r.getValue() instanceof Delivery d
                        && d.isHeldTopic()) {
                    heldTopicRecord("a held topic record with the deliveries", d.key(), d.value());
                } else if (o instanceof StreamRecord<?> r && r.getValue() instanceof Delivery d) {
                    deliveries.add(d);
                    count(d.sendAt() == null ? d.decision() : "ALLOWED (held, sent)");
                    overBound("delivery", d.key(), d.value());
                }
            }
            var audit = h.getSideOutput(CappingFunction.AUDIT);
            StreamRecord<AuditEvent> a;
            while (audit != null && (a = audit.poll()) != null) {
                AuditEvent ev = a.getValue();
                if (ev.held()) {
                    heldTopicRecord("a held notice", ev.key(), ev.json());
                    continue;
                }
                overBound("audit record", ev.key(), ev.json());
                JsonNode json;
                try {
                    json = Json.MAPPER.readTree(ev.json());
                } catch (Exception x) {
                    String text = EdgeInput.show(ev.json());
                    throw new Broken(
                            "audit record is not JSON",
                            x.getMessage()
                                    + ": "
                                    + text.substring(0, Math.min(300, text.length())));
                }
                if (json == null || !json.isObject() || !json.has("decision")) {
                    throw new Broken("audit record without a decision", String.valueOf(json));
                }
                String error = json.path("error").asText("");
                if (error.startsWith("not applied:")) {
                    soft("failure swallowed: " + error.replaceAll("\\d+", "N"), error);
                }
                audits.add(json);
                count(decision(json));
                for (JsonNode v : json.path("violations")) {
                    JsonNode f = v.path("fatigue");
                    if (f.isObject()) {
                        // §5: a limit fatigue lowered reports the lowered max beside the config's
                        if (v.path("max").asLong() >= f.path("configured").asLong()
                                || f.path("unengaged").asLong() < 1) {
                            throw new Broken("a fatigue that lowers nothing", v.toString());
                        }
                        count("violation under fatigue");
                    }
                    if (v.path("lifetime").asBoolean(false)) {
                        // §3: a lifetime limit is never lowered, and its count is below nothing
                        if (f.isObject() || v.path("count").asLong() < 0) {
                            throw new Broken("a lifetime violation out of shape", v.toString());
                        }
                        count("violation of a lifetime limit");
                    }
                }
            }
            // The Redis mirror's writes, not an outcome: the changed users' keys written (as
            // before a barrier), each write applied to Redis.
            h.prepareSnapshotPreBarrier(checkpoint);
            var mirror = h.getSideOutput(CappingFunction.MIRROR);
            StreamRecord<MirrorWrite> w;
            while (mirror != null && (w = mirror.poll()) != null) {
                redis.apply(List.of(w.getValue()));
                count(w.getValue().deletes() ? "Redis key deleted" : "Redis key set");
            }
        }
        return new Out(deliveries, audits);
    }

    /**
     * A record of the held topic (§12): bounded, keyed by user and message, applied as compacted.
     */
    private void heldTopicRecord(String what, byte[] key, byte[] json) {
        overBound(what, key, json);
        if (key == null || key.length > io.freqcap.schema.held.HeldNotice.MAX_KEY_BYTES) {
            soft(what + " with a key out of bounds", String.valueOf(length(key)));
            return;
        }
        String k = new String(key, java.nio.charset.StandardCharsets.UTF_8);
        count(json == null ? "held topic tombstone" : "held topic notice");
        if (json == null) {
            if (ledger.heldTopic.remove(k) == null) {
                soft("a tombstone for a key not live", k);
            }
        } else {
            try {
                JsonNode n = Json.MAPPER.readTree(json);
                if (!k.equals(n.path("userId").asLong() + "/" + n.path("messageId").asText())) {
                    soft("a notice under another key", k + ": " + n);
                }
            } catch (Exception x) {
                throw new Broken("a held notice is not JSON", x.getMessage());
            }
            ledger.heldTopic.put(k, new String(json, java.nio.charset.StandardCharsets.UTF_8));
        }
    }

    /**
     * An output record over {@code --max-record-bytes} (§5): by its value alone, or by its key and
     * value together (a Kafka record's size counts both; headers are the sink's small overhead).
     */
    private void overBound(String what, byte[] key, byte[] value) {
        int k = length(key);
        int v = length(value);
        if (v > maxRecordBytes) {
            String text = EdgeInput.show(value);
            soft(
                    what + " over --max-record-bytes",
                    v
                            + " > "
                            + maxRecordBytes
                            + ": "
                            + text.substring(0, Math.min(400, text.length())));
        } else if (k + v > maxRecordBytes) {
            soft(
                    what + " over --max-record-bytes with its key",
                    v + " + key " + k + " > " + maxRecordBytes);
        }
    }

    private void count(String what) {
        tally.merge(what, 1L, Long::sum);
    }

    private static int length(byte[] b) {
        return b == null ? 0 : b.length;
    }

    // ---- messages

    private void message(EdgeInput e, InboundMessage in, long at, Out out) throws Exception {
        if (in.isMalformed()) {
            List<JsonNode> malformed = out.audits("MALFORMED");
            if (malformed.size() != 1
                    || out.audits().size() != 1
                    || !out.deliveries().isEmpty()
                    || malformed.get(0).at("/source/offset").asLong(-1) != at) {
                throw new Broken("malformed message not one MALFORMED record", out.toString());
            }
            if (shouldBeRead(e)) {
                soft("valid message refused: " + field(in.error()), in.error() + " of " + e);
            }
            return;
        }
        if (e.validity() == Validity.INVALID) {
            soft("invalid message decided", e.toString());
        }
        OutboundMessage m = in.message();
        String key = m.userId() + "/" + m.messageId();
        Pair p = ledger.pairs.computeIfAbsent(key, k -> new Pair());
        p.inputs++;
        int own = 0;
        for (Delivery d : out.deliveries()) {
            if (!key.equals(pairOf(d))) {
                throw new Broken("another message delivered by a message", d + " by " + key);
            }
            if (d.sendAt() != null && (d.sendAt() > clock || d.sendAt() < m.timestamp())) {
                throw new Broken(
                        "released at a send time not between its timestamp and now",
                        d.sendAt() + " for " + m.timestamp() + " at " + clock);
            }
            if (d.sendAt() != null) {
                checkSendTime(m, d.segment(), d.sendAt());
            }
            if ("ALLOWED".equals(d.decision())) {
                ledger.count(
                        m,
                        d.sendAt() != null ? d.sendAt() : m.timestamp(),
                        d.configVersion(),
                        d.segment());
            }
            if (d.configVersion() != ledger.inForce.version()) {
                soft(
                        "decided under another config than the one in force",
                        "v" + d.configVersion() + ", in force v" + ledger.inForce.version());
            }
            own++;
        }
        for (JsonNode a : out.audits()) {
            String decision = decision(a);
            if (decision.equals("PREEMPTED")) {
                if (!a.path("preemptedBy").asText().equals(m.messageId())
                        || a.path("userId").asLong() != m.userId()) {
                    throw new Broken("preempted by another message", a.toString());
                }
                withdrawn(a, "PREEMPTED");
            } else if (Set.of("REJECTED", "DUPLICATE", "STALE").contains(decision)) {
                if (!key.equals(pairOf(a))) {
                    throw new Broken("another message decided by a message", a + " by " + key);
                }
                if (a.path("configVersion").asLong() != ledger.inForce.version()) {
                    soft(
                            "decided under another config than the one in force",
                            a.path("configVersion") + ", in force v" + ledger.inForce.version());
                }
                if (decision.equals("REJECTED")) {
                    checkRetryAfter(a, m);
                }
                own++;
            } else {
                throw new Broken("unexpected " + decision + " for a message", a.toString());
            }
        }
        if (own > 1) {
            throw new Broken("two outcomes for one message", out.toString());
        }
        if (own == 1) {
            p.finals++;
            return;
        }
        // Held: its outcome comes later.
        count("held");
        long sendAt = -1;
        for (HeldDelivery h : heldInState(m.userId())) {
            if (h.message().messageId().equals(m.messageId())
                    && h.message().timestamp() == m.timestamp()) {
                if (sendAt < 0) {
                    ledger.count(
                            m,
                            h.delivery().sendAt(),
                            h.delivery().configVersion(),
                            h.delivery().segment());
                }
                sendAt = Math.max(sendAt, h.delivery().sendAt());
                checkSendTime(m, h.delivery().segment(), h.delivery().sendAt());
                if (h.delivery().configVersion() != ledger.inForce.version()) {
                    soft(
                            "decided under another config than the one in force",
                            "held under v"
                                    + h.delivery().configVersion()
                                    + ", in force v"
                                    + ledger.inForce.version());
                }
            }
        }
        if (sendAt < 0) {
            throw new Broken("no outcome and not held", key + " at " + m.timestamp());
        }
        p.waiting.add(
                new Held(
                        m.userId(),
                        m.messageId(),
                        m.channel(),
                        m.category(),
                        m.campaignId(),
                        m.timestamp(),
                        sendAt));
        ledger.heldUsers.add(m.userId());
        int waiting = ledger.waitingByUser.merge(m.userId(), 1, Integer::sum);
        if (waiting > ledger.inForce.maxHeld()) {
            throw new Broken(
                    "more than maxHeld waiting",
                    "user "
                            + m.userId()
                            + ": "
                            + waiting
                            + " > "
                            + ledger.inForce.maxHeld()
                            + " at clock "
                            + clock
                            + ": "
                            + waitingOf(m.userId()));
        }
    }

    /**
     * A held message's send time t' (§3, §6): after its timestamp, within its rule's {@code hold},
     * outside its rule's quiet hours for its channel in its zone.
     */
    private void checkSendTime(OutboundMessage m, String segment, long sendAt) {
        Rule rule = ledger.inForce.ruleFor(segment);
        if (sendAt <= m.timestamp() || sendAt - m.timestamp() > rule.deferral().holdMillis()) {
            soft(
                    "held beyond its rule's hold",
                    "send time "
                            + sendAt
                            + " for timestamp "
                            + m.timestamp()
                            + ", hold "
                            + rule.deferral().hold()
                            + " of rule "
                            + segment);
        }
        QuietHours quiet = rule.quietHoursFor(m.channel());
        if (quiet != null) {
            ZoneId zone =
                    ZoneId.of(m.timezone() != null ? m.timezone() : ledger.inForce.timezone());
            long offset = zone.getRules().getOffset(Instant.ofEpochMilli(sendAt)).getTotalSeconds();
            // Each term reduced to a day first: near Long.MAX_VALUE the sum would overflow.
            long local = Math.floorMod(sendAt, 86_400_000L) + offset * 1000L;
            if (quiet.isQuiet(Math.floorMod(local, 86_400_000L))) {
                soft(
                        "held to a send time inside quiet hours",
                        sendAt + " in " + zone + " for " + quiet.from() + "-" + quiet.to());
            }
        }
    }

    /**
     * A REJECTED record's {@code retryAfter} (§5, §10): null where waiting cannot help (an opt-out,
     * a pause for good from the year 10000 on), else later than the timestamp (unless the user's
     * held messages are what it waits for: {@code maxHeld}'s retry is the first of them).
     */
    private void checkRetryAfter(JsonNode a, OutboundMessage m) {
        JsonNode retry = a.path("retryAfter");
        boolean never = false;
        boolean byHeld = false;
        for (JsonNode v : a.path("violations")) {
            String scope = v.path("scope").asText();
            never |= scope.equals("preference:opt-out");
            never |= scope.equals("preference:paused") && v.path("until").asLong() >= YEAR_10000;
            never |= v.path("lifetime").asBoolean(false); // §3: no send time helps
            byHeld |= scope.equals("hold");
        }
        if (never && !retry.isNull()) {
            soft("a retryAfter where no time would pass", a.toString());
        } else if (!retry.isNull() && !byHeld && retry.asLong() <= m.timestamp()) {
            soft("a retryAfter not after the timestamp", retry + " for " + m.timestamp());
        }
    }

    private static final long YEAR_10000 = 253_402_300_800_000L;

    private List<Held> waitingOf(long user) {
        List<Held> out = new ArrayList<>();
        for (Pair p : ledger.pairs.values()) {
            for (Held h : p.waiting) {
                if (h.user() == user) {
                    out.add(h);
                }
            }
        }
        return out;
    }

    /** Whether the contract says this message must be read (not MALFORMED). */
    private boolean shouldBeRead(EdgeInput e) {
        if (e.validity() != Validity.VALID) {
            return false;
        }
        if (length(e.key()) + length(e.value()) > maxRecordBytes) {
            return false; // record too large
        }
        try {
            OutboundMessage m = OutboundMessage.parse(e.value());
            if (e.key() == null
                    && length(e.value()) + Long.toString(m.userId()).length() > maxRecordBytes) {
                return false; // too large for its delivery, keyed by the userId text (§1)
            }
            long t = m.timestamp();
            return maxFuture.millis() == Long.MAX_VALUE || t - clock <= maxFuture.millis();
        } catch (MalformedRecordException x) {
            return true; // the contract says valid; the reader does not: that is the finding
        }
    }

    /** A field's path from an error text ({@code rules[2].limits[0].max: ...}), numbers as n. */
    static String field(String error) {
        if (error == null) {
            return "?";
        }
        int colon = error.indexOf(':');
        String f = colon < 0 ? error : error.substring(0, colon);
        f = f.replaceAll("\\d+", "n");
        return f.length() > 60 ? f.substring(0, 60) : f;
    }

    private static String pairOf(Delivery d) {
        try {
            OutboundMessage m = OutboundMessage.parse(d.value());
            return m.userId() + "/" + m.messageId();
        } catch (MalformedRecordException e) {
            throw new Broken("delivered a value that is no message", e.getMessage());
        }
    }

    private static String pairOf(JsonNode a) {
        return a.path("userId").asLong() + "/" + a.path("messageId").asText();
    }

    /**
     * A held message's end by a withdrawal (FORGOTTEN, PREEMPTED, CANCELLED): one waited, and it
     * stops counting.
     */
    private Held withdrawn(JsonNode a, String decision) {
        if (!a.has("sendAt")) {
            throw new Broken(decision + " without sendAt", a.toString());
        }
        Held h = ledger.endWaiting(pairOf(a), decision + " of a message not waiting");
        ledger.uncount(h.user(), h.messageId(), h.sendAt());
        return h;
    }

    /** Deliveries of held messages whose time came (releases): each waited, each once. */
    private void released(Out out, String by) {
        for (Delivery d : out.deliveries()) {
            if (d.sendAt() == null || !"ALLOWED".equals(d.decision())) {
                throw new Broken("a delivery by " + by + " that was not held", d.toString());
            }
            if (d.sendAt() > clock) {
                throw new Broken("released before its send time", d.sendAt() + " > " + clock);
            }
            Held h = ledger.endWaiting(pairOf(d), "released a message not waiting");
            if (d.sendAt() < h.timestamp()) {
                throw new Broken("sent before its timestamp", d.sendAt() + " < " + h.timestamp());
            }
            if (d.sendAt() != h.sendAt()) {
                soft(
                        "released with another send time than it was held for",
                        d.sendAt() + " for " + h);
            }
        }
        if (!out.audits().isEmpty()) {
            throw new Broken("audit records from " + by, out.audits().toString());
        }
    }

    /**
     * Redis holds, for every user, the log of what its task counts (§7): {@link MirrorLog#of} of
     * the user's history, with the longest window in force (a config that changes it rewrites every
     * key). A sweep clears histories without writing: their keys are left to expire, which the
     * model does not do by itself.
     */
    private void checkMirror(boolean swept) throws Exception {
        if (!settings.mirror()) {
            return;
        }
        java.util.Set<Long> users = new java.util.TreeSet<>(redis.keys().keySet());
        users.addAll(ledger.counted.keySet());
        for (long user : users) {
            CountedHistory history = historyOf(user);
            MirrorModel.Key key = redis.key(user);
            if (swept && key != null && history.isEmpty()) {
                redis.expire(user);
                continue;
            }
            if (replaying) {
                continue;
            }
            MirrorWrite expected =
                    MirrorLog.of(user, history, ledger.inForce.longestWindowMillis());
            String want =
                    expected.deletes() ? null : new String(expected.log(), StandardCharsets.UTF_8);
            String have = key == null ? null : key.value();
            if (!java.util.Objects.equals(want, have)) {
                soft(
                        "Redis holds another log than the task counts",
                        "user " + user + ": Redis " + have + ", counted " + want);
            } else if (key != null && key.expireAt() != expected.expireAt()) {
                soft(
                        "a Redis key expires at another time than its log says",
                        "user " + user + ": " + key.expireAt() + ", log " + expected.expireAt());
            }
        }
    }

    /** The user's history as its task counts it (its cache and long histories in memory too). */
    private CountedHistory historyOf(long user) throws Exception {
        var h = task(user);
        h.getOperator().getKeyedStateBackend().setCurrentKey(user);
        // the task's history store, cache included: reading it writes no checkpoint, which would
        // write the cache back and change what the run exercises
        return ((CappingFunction) ((CappingOperator) h.getOperator()).getUserFunction())
                .parts()
                .histories
                .get(user);
    }

    /** The heldNow gauges of the tasks: what waits by the outputs' count. */
    private void checkHeldNow() {
        long gauges = 0;
        for (var h : tasks) {
            gauges +=
                    ((CappingFunction) ((CappingOperator) h.getOperator()).getUserFunction())
                            .heldSide()
                            .held()
                            .heldNow();
        }
        long waiting = 0;
        for (int n : ledger.waitingByUser.values()) {
            waiting += n;
        }
        if (gauges != waiting) {
            soft(
                    "heldNow differs from the messages waiting",
                    "heldNow " + gauges + ", waiting by the outputs " + waiting);
        }
    }

    /** The current user's held messages as keyed state holds them (on the task owning it). */
    private List<HeldDelivery> heldInState(long user) throws Exception {
        var backend = task(user).getOperator().getKeyedStateBackend();
        backend.setCurrentKey(user);
        MapState<HeldKey, HeldDelivery> state = CappingHarnesses.keyed(backend, HeldMessages.STATE);
        List<HeldDelivery> out = new ArrayList<>();
        for (Map.Entry<HeldKey, HeldDelivery> e : state.entries()) {
            out.add(e.getValue());
        }
        return out;
    }

    /**
     * Held state holds what waits by the outputs' count, message for message, and nothing whose
     * send time the clock has passed (its timer fired).
     */
    private void checkHeldState() throws Exception {
        for (long user : ledger.heldUsers) {
            List<String> inState = new ArrayList<>();
            for (HeldDelivery h : heldInState(user)) {
                inState.add(h.message().messageId() + "@" + h.delivery().sendAt());
                if (h.delivery().sendAt() <= clock) {
                    soft(
                            "a held message past its send time still waits",
                            "user "
                                    + user
                                    + ": "
                                    + h.message().messageId()
                                    + " at "
                                    + h.delivery().sendAt()
                                    + ", clock "
                                    + clock);
                }
            }
            List<String> waiting = new ArrayList<>();
            for (Pair p : ledger.pairs.values()) {
                for (Held h : p.waiting) {
                    if (h.user() == user) {
                        waiting.add(h.messageId() + "@" + h.sendAt());
                    }
                }
            }
            java.util.Collections.sort(inState);
            java.util.Collections.sort(waiting);
            if (!inState.equals(waiting)) {
                soft(
                        "held state differs from the messages waiting",
                        "user " + user + ": state " + inState + ", waiting " + waiting);
            }
        }
        // The held topic's live keys are exactly what waits (§12).
        java.util.Set<String> waitingKeys = new java.util.TreeSet<>();
        for (Pair p : ledger.pairs.values()) {
            for (Held h : p.waiting) {
                waitingKeys.add(h.user() + "/" + h.messageId());
            }
        }
        if (!waitingKeys.equals(ledger.heldTopic.keySet())) {
            java.util.Set<String> extra = new java.util.TreeSet<>(ledger.heldTopic.keySet());
            extra.removeAll(waitingKeys);
            java.util.Set<String> missing = new java.util.TreeSet<>(waitingKeys);
            missing.removeAll(ledger.heldTopic.keySet());
            soft(
                    "the held topic's live keys differ from what waits",
                    "live but not waiting " + extra + ", waiting but not live " + missing);
        }
    }

    // ---- preferences and receipts

    private void userInput(EdgeInput e, InboundMessage in, long at, Out out) throws Exception {
        String what = e.topic() == EdgeInput.Topic.PREFERENCES ? "preference" : "receipt";
        if (!out.deliveries().isEmpty()) {
            throw new Broken("a delivery by a " + what, out.deliveries().toString());
        }
        Refusals refused = new Refusals(e, at);
        for (JsonNode a : out.audits()) {
            String decision = decision(a);
            if (refused.took(a)) {
                continue;
            }
            if (decision.equals("CANCELLED") && what.equals("preference")) {
                if (a.path("userId").asLong() != in.routingKey()) {
                    throw new Broken("a preference cancelled another user's message", a.toString());
                }
                withdrawn(a, "CANCELLED");
            } else {
                throw new Broken("unexpected " + decision + " for a " + what, a.toString());
            }
        }
        refused.judge(what, out, false);
        if (refused.none() && what.equals("preference")) {
            preferenceApplied(e, in.routingKey());
        }
        if (refused.none() && what.equals("receipt")) {
            // A failed delivery stops counting (§11), unless its message still waits: the job
            // ignores that one, and so does the ledger, so that a wrong un-count of a held message
            // shows as more admitted than a limit allows.
            DeliveryReceipt r = DeliveryReceipt.parse(e.value());
            Pair p = ledger.pairs.get(r.userId() + "/" + r.messageId());
            if (r.failed() && (p == null || p.waiting.isEmpty())) {
                ledger.uncount(r.userId(), r.messageId(), Long.MIN_VALUE);
            }
        }
    }

    /**
     * A preference the task read: in force when its version is above the user's (§10), and then
     * none of the user's held messages of a channel or category it opts out of still waits.
     */
    private void preferenceApplied(EdgeInput e, long user) throws Exception {
        PreferenceRecord r = readPreference(e);
        if (r instanceof PreferenceRecord.Clear) {
            ledger.preferenceVersions.remove(user);
            return;
        }
        UserPreferences p = ((PreferenceRecord.Update) r).preferences();
        Long inForceVersion = ledger.preferenceVersions.get(user);
        if (inForceVersion != null && p.version() <= inForceVersion) {
            return;
        }
        ledger.preferenceVersions.put(user, p.version());
        if (p.pausedUntil() != null) {
            for (HeldDelivery h : heldInState(user)) {
                if (h.delivery().sendAt() < p.pausedUntil()) {
                    soft(
                            "held message within a pause still waits",
                            h.message().messageId()
                                    + " at "
                                    + h.delivery().sendAt()
                                    + " after "
                                    + e);
                }
            }
        }
        for (Map.Entry<String, Pair> entry : ledger.pairs.entrySet()) {
            for (Held h : entry.getValue().waiting) {
                if (h.user() == user && p.optsOut(h.channel(), h.category())) {
                    soft(
                            "held message of an opted-out channel or category still waits",
                            entry.getKey() + " after " + e);
                }
            }
        }
    }

    private static PreferenceRecord readPreference(EdgeInput e) throws Exception {
        return PreferenceRecord.read(e.key(), e.value());
    }

    /**
     * The INVALID_CONTROL records of one record of a user or control topic (its topic, its offset):
     * at most one; a valid record refused or an invalid one applied is noted.
     */
    private final class Refusals {
        private final EdgeInput e;
        private final long at;
        private int count;

        /** The last refusal's error, null for none. */
        String error;

        Refusals(EdgeInput e, long at) {
            this.e = e;
            this.at = at;
        }

        /** Whether {@code a} refuses the record; counted when it does. */
        boolean took(JsonNode a) {
            if (!decision(a).equals("INVALID_CONTROL")
                    || a.at("/source/offset").asLong(-1) != at
                    || !a.at("/source/topic").asText().equals(e.topic().defaultName)) {
                return false;
            }
            count++;
            error = a.path("error").asText();
            return true;
        }

        boolean none() {
            return count == 0;
        }

        /**
         * Throws when the record was refused twice; notes a valid record refused (unless {@code
         * excused}: refused for the task's state, not its own) and an invalid one applied.
         */
        void judge(String what, Out out, boolean excused) {
            if (count > 1) {
                throw new Broken("two INVALID_CONTROL records for one " + what, out.toString());
            }
            if (e.validity() == Validity.VALID && count == 1 && !excused) {
                soft("valid " + what + " refused: " + field(error), error + " of " + e);
            }
            if (e.validity() == Validity.INVALID && count == 0) {
                soft("invalid " + what + " applied", e.toString());
            }
        }
    }

    // ---- control records

    private void control(EdgeInput e, long at, Out out) {
        if (!out.deliveries().isEmpty()) {
            throw new Broken("a delivery by a control record", out.deliveries().toString());
        }
        ConfigRecord parsed = null;
        if (e.topic() == EdgeInput.Topic.CONFIG) {
            try {
                parsed = ConfigTopic.parse(e.value());
            } catch (MalformedRecordException x) {
                // refused: an INVALID_CONTROL record must say so
            }
        }
        String what =
                e.topic() == EdgeInput.Topic.SEGMENTS
                        ? "segment update"
                        : utf8(e.value()).contains("\"command\"") ? "command" : "config";
        Refusals refused = new Refusals(e, at);
        List<Held> withdrawn = new ArrayList<>();
        for (JsonNode a : out.audits()) {
            String decision = decision(a);
            if (refused.took(a)) {
                continue;
            }
            if ((decision.equals("FORGOTTEN") && parsed instanceof ConfigRecord.ForgetUser)
                    || (decision.equals("CANCELLED")
                            && parsed instanceof ConfigRecord.CancelHeld)) {
                withdrawn.add(withdrawn(a, decision));
            } else {
                throw new Broken("unexpected " + decision + " for a " + what, a.toString());
            }
        }
        String error = refused.error;
        boolean stateful =
                error != null
                        && (error.startsWith("stale version")
                                || error.startsWith("unknown segment"));
        refused.judge(what, out, stateful);
        boolean invalid = !refused.none();
        if (parsed instanceof LimitConfig c) {
            boolean stale = c.version() <= ledger.inForce.version();
            if (stale != (error != null && error.startsWith("stale version"))) {
                soft(
                        "stale version misjudged",
                        "v" + c.version() + " against v" + ledger.inForce.version() + ": " + error);
            }
            if (!invalid) {
                ledger.inForce(c);
            }
        } else if (parsed instanceof ConfigRecord.ForgetUser f && !invalid) {
            for (Held h : withdrawn) {
                if (h.user() != f.userId()) {
                    throw new Broken("forget-user forgot another user's message", f + "");
                }
            }
            if (ledger.waitingByUser.getOrDefault(f.userId(), 0) != 0) {
                soft("held message of a forgotten user still waits", f + "");
            }
            ledger.preferenceVersions.remove(f.userId());
            ledger.counted.remove(f.userId());
        } else if (parsed instanceof ConfigRecord.EndCampaign c && !invalid) {
            ledger.ended.computeIfAbsent(c.campaignId(), k -> new ArrayList<>()).add(ledger.seq);
        } else if (parsed instanceof ConfigRecord.CancelHeld c && !invalid) {
            for (Held h : withdrawn) {
                if (!names(c, h)) {
                    throw new Broken("cancel-held cancelled another message", c + " took " + h);
                }
            }
            for (Map.Entry<String, Pair> entry : ledger.pairs.entrySet()) {
                for (Held h : entry.getValue().waiting) {
                    if (names(c, h)) {
                        soft(
                                "held message a cancel-held names still waits",
                                entry.getKey() + " after " + e);
                    }
                }
            }
        } else if (parsed instanceof ConfigRecord.ForgetUser
                || parsed instanceof ConfigRecord.CancelHeld) {
            // not applied (audited): nothing withdrawn
            if (!withdrawn.isEmpty()) {
                throw new Broken("a command refused yet withdrew messages", error);
            }
        }
    }

    static String utf8(byte[] b) {
        return b == null ? "null" : new String(b, StandardCharsets.UTF_8);
    }
}
