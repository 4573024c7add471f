package io.freqcap.operators.capping;

import io.freqcap.operators.capping.controlstate.ControlInput;
import io.freqcap.operators.capping.outputs.HeldNotices;
import io.freqcap.operators.capping.state.HistoryCache;
import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.LimitConfig;
import java.io.Serializable;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a capping task is started with.
 *
 * @param initialConfig the config given at start ({@code --limits}), parsed and checked once; in
 *     force until a higher version arrives
 * @param initialSegmentsJson a JSON array of full loads in force before the first message ({@code
 *     --segments}), or null
 * @param mirror emit counted messages for the Redis mirror and keep their ids for rebuilds
 * @param historyCacheSlots slots of each task's history cache (rounded up to a power of two), 0 for
 *     none
 * @param bounds the largest output record; where and how much segment files are read from
 * @param liveHistoryBytes heap (estimated bytes) the long histories of each task may take together
 * @param commandsFrom for a start without state: per config-topic partition, the offset its
 *     commands are applied from (the end of the topic when the job was started: commands already on
 *     it are not applied, contract.md §7); empty to apply every command. A restored job keeps the
 *     map of its first start, from its state.
 * @param heldTopic the held-messages topic (contract.md §12) as a start reads it, or null for none
 *     ({@code --held-topic} not given): HeldNotices and tombstones are written only with it
 */
public record CappingSettings(
        LimitConfig initialConfig,
        String initialSegmentsJson,
        boolean mirror,
        int historyCacheSlots,
        Bounds bounds,
        long liveHistoryBytes,
        Map<Integer, Long> commandsFrom,
        HeldNotices.LiveKeys heldTopic)
        implements Serializable {

    /** Slots of each task's {@link HistoryCache} unless told otherwise (about 136 MB full). */
    public static final int DEFAULT_HISTORY_CACHE_SLOTS = 1 << 20;

    public static final int MAX_HISTORY_CACHE_SLOTS = HistoryCache.MAX_SLOTS;

    /** Heap the long histories of each task may take together, in estimated bytes. */
    public static final long DEFAULT_LIVE_HISTORY_BYTES = HistoryStore.LIVE_BYTES;

    public CappingSettings {
        commandsFrom = Collections.unmodifiableMap(new TreeMap<>(commandsFrom));
        if (liveHistoryBytes < 0) {
            throw new IllegalArgumentException("live history bytes must not be negative");
        }
        if (historyCacheSlots < 0 || historyCacheSlots > MAX_HISTORY_CACHE_SLOTS) {
            throw new IllegalArgumentException(
                    "history cache slots must be 0.."
                            + MAX_HISTORY_CACHE_SLOTS
                            + ", got "
                            + historyCacheSlots);
        }
    }

    /** The defaults around an initial config: no segments, no mirror, the default cache. */
    public static CappingSettings of(LimitConfig initialConfig) {
        return new CappingSettings(
                initialConfig,
                null,
                false,
                DEFAULT_HISTORY_CACHE_SLOTS,
                Bounds.DEFAULTS,
                HistoryStore.LIVE_BYTES,
                Map.of(),
                null);
    }

    /** The same, from the config's JSON, which must be valid. */
    public static CappingSettings of(String initialConfigJson) {
        try {
            return of(LimitConfig.parse(initialConfigJson));
        } catch (MalformedRecordException e) {
            throw new IllegalArgumentException("invalid config: " + e.getMessage(), e);
        }
    }

    public CappingSettings withSegments(String json) {
        return with(c -> c.initialSegmentsJson = json);
    }

    public CappingSettings withMirror(boolean on) {
        return with(c -> c.mirror = on);
    }

    public CappingSettings withHistoryCache(int slots) {
        return with(c -> c.historyCacheSlots = slots);
    }

    public CappingSettings withBounds(Bounds b) {
        return with(c -> c.bounds = b);
    }

    /** Long histories kept in memory, in bytes per task; the least recently used go first. */
    public CappingSettings withLiveHistoryBytes(long bytes) {
        return with(c -> c.liveHistoryBytes = bytes);
    }

    /** What the control side starts from besides its state. */
    public ControlInput.Start controlStart() {
        return new ControlInput.Start(
                initialConfig, initialSegmentsJson, bounds.segmentLoader(), commandsFrom);
    }

    /** Commands at or after these config-topic offsets are applied (see {@code commandsFrom}). */
    public CappingSettings withCommandsFrom(Map<Integer, Long> offsets) {
        return with(c -> c.commandsFrom = offsets);
    }

    /** HeldNotices on the held topic this start reads ({@code --held-topic}); null for none. */
    public CappingSettings withHeldTopic(HeldNotices.LiveKeys topic) {
        return with(c -> c.heldTopic = topic);
    }

    /** A copy with one setting changed. */
    private CappingSettings with(java.util.function.Consumer<Copy> change) {
        Copy c = new Copy(this);
        change.accept(c);
        return c.settings();
    }

    /** The settings as a wither changes them: one place that lists every component. */
    private static final class Copy {
        private final LimitConfig initialConfig;
        private String initialSegmentsJson;
        private boolean mirror;
        private int historyCacheSlots;
        private Bounds bounds;
        private long liveHistoryBytes;
        private Map<Integer, Long> commandsFrom;
        private HeldNotices.LiveKeys heldTopic;

        private Copy(CappingSettings s) {
            initialConfig = s.initialConfig;
            initialSegmentsJson = s.initialSegmentsJson;
            mirror = s.mirror;
            historyCacheSlots = s.historyCacheSlots;
            bounds = s.bounds;
            liveHistoryBytes = s.liveHistoryBytes;
            commandsFrom = s.commandsFrom;
            heldTopic = s.heldTopic;
        }

        private CappingSettings settings() {
            return new CappingSettings(
                    initialConfig,
                    initialSegmentsJson,
                    mirror,
                    historyCacheSlots,
                    bounds,
                    liveHistoryBytes,
                    commandsFrom,
                    heldTopic);
        }
    }
}
