package io.freqcap.operators.control;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.segments.SegmentLoader;
import io.freqcap.operators.segments.SegmentTable;
import io.freqcap.operators.segments.SegmentUnavailableException;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.ConfigRecord;
import io.freqcap.schema.config.ConfigTopic;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.segment.SegmentUpdate;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The control side of capping, in plain Java: the limit config in force, the segments held, and
 * what a record of a control topic does to them (contract.md §3, §4, §7). Configs and segment
 * updates apply by version, so every parallel instance ends up in the same state whatever order it
 * sees them in. Nothing a control record holds or makes go wrong escapes {@link #apply}: it becomes
 * an {@link Outcome.NotApplied} with the reason to audit.
 */
public final class ControlHandler implements AutoCloseable {

    /** What applying one control record did. */
    public interface Outcome {
        /** A newer config is in force. */
        record ConfigApplied(LimitConfig config) implements Outcome {}

        /** A segment changed; {@code descriptor} is what state keeps of it now. */
        record SegmentApplied(String segmentId, long version, String descriptor)
                implements Outcome {}

        /** A known command, for the caller to carry out. */
        record Command(String name) implements Outcome {}

        /** {@code forget-user}, for the caller to carry out on the user's keyed state. */
        record ForgetUser(long userId) implements Outcome {}

        /**
         * {@code cancel-held}, for the caller to carry out on held messages: of one user, or of
         * every user when its {@code userId} is null.
         */
        record CancelHeld(ConfigRecord.CancelHeld command) implements Outcome {}

        /**
         * {@code end-campaign}, for the caller to carry out on every user's lifetime counts
         * (contract.md §7).
         */
        record EndCampaign(String campaignId) implements Outcome {}

        /**
         * A command that was on the config topic before a job without state started: not applied
         * (contract.md §7); {@code why} for the log.
         */
        record Skipped(String why) implements Outcome {}

        /**
         * Nothing changed; {@code error} says why (the INVALID_CONTROL error). {@code cause} is the
         * unexpected exception behind it, if any (for the log).
         */
        record NotApplied(String error, Throwable cause) implements Outcome {}
    }

    private final SegmentLoader loader;
    private final SegmentTable segments;
    private LimitConfig config;

    private ControlHandler(LimitConfig config, SegmentTable segments, SegmentLoader loader) {
        this.config = config;
        this.segments = segments;
        this.loader = loader;
    }

    /**
     * The state of a task that starts: the highest config version of the initial one and those
     * restored; the restored segments, then the initial full loads where newer.
     *
     * @param restoredConfigs configs as JSON, from state
     * @param descriptors segment descriptors, from state
     * @param initialSegments the --segments loads, or an empty list
     * @param log where what could not be restored (or an initial load older than state) is told
     */
    public static ControlHandler start(
            LimitConfig initial,
            Iterable<String> restoredConfigs,
            Map<String, String> descriptors,
            List<SegmentUpdate> initialSegments,
            SegmentLoader loader,
            Consumer<String> log)
            throws IOException, MalformedRecordException {
        LimitConfig config = initial;
        for (String json : restoredConfigs) {
            LimitConfig restored = LimitConfig.parse(json);
            if (restored.version() > config.version()) {
                config = restored;
            }
        }
        List<String> problems = new ArrayList<>();
        SegmentTable segments = SegmentTable.restore(descriptors, loader, problems);
        problems.forEach(p -> log.accept("Restoring segments: " + p));
        for (SegmentUpdate u : initialSegments) {
            String error = segments.apply(u, loader);
            if (error != null) {
                // Restored state may hold newer versions; anything else was checked at start.
                log.accept("Initial segment " + u.segmentId() + " not applied: " + error);
            }
        }
        return new ControlHandler(config, segments, loader);
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

    public LimitConfig config() {
        return config;
    }

    public SegmentTable segments() {
        return segments;
    }

    /** Applies a config, a segment update or a command (not a tick). */
    public Outcome apply(ControlRecord rec) {
        try {
            if (rec.kind() == ControlRecord.Kind.SEGMENT) {
                SegmentUpdate u = SegmentUpdate.parse(rec.value());
                String error = segments.apply(u, loader, rec.checkedCrc32(), rec.checkError());
                return error != null
                        ? new Outcome.NotApplied(error, null)
                        : new Outcome.SegmentApplied(
                                u.segmentId(), u.version(), segments.descriptor(u.segmentId()));
            }
            ConfigRecord parsed = ConfigTopic.parse(rec.value());
            if (parsed instanceof ConfigRecord.ForgetUser f) {
                return new Outcome.ForgetUser(f.userId());
            }
            if (parsed instanceof ConfigRecord.CancelHeld c) {
                return new Outcome.CancelHeld(c);
            }
            if (parsed instanceof ConfigRecord.EndCampaign e) {
                return new Outcome.EndCampaign(e.campaignId());
            }
            if (parsed instanceof ConfigRecord.Command c) {
                return ConfigRecord.Command.REBUILD_MIRROR.equals(c.name())
                        ? new Outcome.Command(c.name())
                        : new Outcome.NotApplied("unknown command \"" + c.name() + "\"", null);
            }
            LimitConfig next = (LimitConfig) parsed;
            if (next.version() <= config.version()) {
                return new Outcome.NotApplied(
                        "stale version: "
                                + next.version()
                                + " is not greater than the version in force, "
                                + config.version(),
                        null);
            }
            config = next;
            return new Outcome.ConfigApplied(next);
        } catch (MalformedRecordException e) {
            return new Outcome.NotApplied(e.getMessage(), null);
        } catch (SegmentUnavailableException e) {
            throw e; // fails the task: see SegmentUnavailableException
        } catch (Throwable e) {
            // Whatever a control record makes go wrong (a broken file-system plugin, a bug), it
            // must not fail the task: a restarted task reads the same record again, and fails
            // again, for ever. Only errors the JVM cannot go on after are let through.
            if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
                throw (VirtualMachineError) e;
            }
            return new Outcome.NotApplied(
                    "not applied: " + e.getClass().getSimpleName() + " while applying it", e);
        }
    }

    /** Gives back this task's share of the cached bitmaps. */
    @Override
    public void close() {
        segments.close();
    }
}
