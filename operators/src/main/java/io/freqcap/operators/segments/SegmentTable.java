package io.freqcap.operators.segments;

import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.segment.SegmentBitmap;
import io.freqcap.schema.segment.SegmentUpdate;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The segments a capping task holds and the rule of contract.md §4 that picks a user's segment.
 * Plain Java: the Flink function keeps {@link #descriptors()} in broadcast state and rebuilds a
 * table from them on restore.
 *
 * <p>A user's segment is the one of highest priority that contains the user and has a rule in the
 * config in force; ties go to the lexically smaller segmentId; otherwise {@code *}.
 *
 * <p>What state holds per segment is a descriptor, not the bitmap, for segments loaded from a uri:
 * version, priority, format, uri, CRC-32 of the bytes, and the add/remove deltas applied since the
 * load. Inline bitmaps arrived inside a Kafka record and are small; they are kept. Deleted segments
 * stay as tombstones with their version, so a delayed older load cannot bring them back. Updates
 * apply by version, never by arrival order.
 *
 * <p>A load checked upstream goes through {@link CheckedLoad}; which segments a config has rules
 * for is kept by {@link RuledSegments}.
 */
public final class SegmentTable {

    private final Map<String, KnownSegment> segments = new HashMap<>();

    /** Where {@link #resolve} leaves what its touches read, so that the JIT keeps the loads. */
    @SuppressWarnings("unused")
    private int touchSink;

    private KnownSegment[] byPriority = new KnownSegment[0];

    /** The segments with a rule, and with a shadow rule, under the config last asked about. */
    private final RuledSegments ruled = new RuledSegments(LimitConfig::hasRule);

    private final RuledSegments shadowRuled = new RuledSegments(LimitConfig::hasShadowRule);

    /**
     * Applies one update.
     *
     * @return null when applied, else why not (the INVALID_CONTROL error); the segment then keeps
     *     its previous content
     */
    public String apply(SegmentUpdate u, SegmentLoader loader) {
        return apply(u, loader, null, null);
    }

    private CheckedLoad.Sleeper sleeper = Thread::sleep;

    void sleeper(CheckedLoad.Sleeper s) {
        this.sleeper = s;
    }

    /**
     * Applies one update whose segment file was checked before it was broadcast ({@link
     * SegmentCheck}): a file found bad is refused with the check's reason, unread; a file found
     * good is loaded as {@link CheckedLoad} does, which fails the task when it cannot.
     *
     * @param checkedCrc32 the CRC-32 of the file found good, or null when not checked
     * @param checkError why the file was found bad, or null
     * @return null when applied, else why not (the INVALID_CONTROL error)
     */
    public String apply(
            SegmentUpdate u, SegmentLoader loader, Long checkedCrc32, String checkError) {
        KnownSegment held = segments.get(u.segmentId());
        if (held != null && u.version() <= held.version) {
            return "stale version: "
                    + u.version()
                    + " is not greater than the version held, "
                    + held.version
                    + ", of segment \""
                    + u.segmentId()
                    + "\"";
        }
        if (checkError != null && u.op() == SegmentUpdate.Op.LOAD) {
            return checkError;
        }
        switch (u.op()) {
            case LOAD:
                SegmentBitmap base;
                long crc;
                SegmentCache.Key key = null;
                try {
                    if (u.uri() != null && checkedCrc32 != null) {
                        key = new SegmentCache.Key(u.segmentId(), u.version(), u.uri(), u.format());
                        SegmentCache.Loaded loaded =
                                CheckedLoad.acquire(key, loader, checkedCrc32, sleeper);
                        base = loaded.bitmap();
                        crc = loaded.crc32();
                    } else if (u.uri() != null) {
                        key = new SegmentCache.Key(u.segmentId(), u.version(), u.uri(), u.format());
                        SegmentCache.Loaded loaded = SegmentCache.acquire(key, loader);
                        base = loaded.bitmap();
                        crc = loaded.crc32();
                    } else {
                        base = SegmentBitmap.read(u.bitmap(), u.format());
                        crc = CheckedLoad.crc32(u.bitmap());
                    }
                } catch (SegmentUnavailableException e) {
                    throw e;
                } catch (IOException | RuntimeException e) {
                    return CheckedLoad.unreadable(u.uri(), e);
                } catch (MalformedRecordException e) {
                    return "segment \"" + u.segmentId() + "\": " + e.getMessage();
                }
                put(
                        new KnownSegment(
                                        u.segmentId(),
                                        u.version(),
                                        u.priority(),
                                        new SegmentSource(
                                                u.format(),
                                                u.uri(),
                                                crc,
                                                u.uri() == null ? u.bitmap() : null),
                                        base,
                                        new Roaring64NavigableMap(),
                                        new Roaring64NavigableMap(),
                                        false)
                                .holding(key));
                releaseCopy(held);
                return null;
            case ADD:
            case REMOVE:
                if (held == null || held.deleted) {
                    return "unknown segment \"" + u.segmentId() + "\"";
                }
                for (long id : u.userIds()) {
                    if (u.op() == SegmentUpdate.Op.ADD) {
                        held.added.addLong(id);
                        held.removed.removeLong(id);
                    } else {
                        held.removed.addLong(id);
                        held.added.removeLong(id);
                    }
                }
                put(held.withVersion(u.version()));
                return null;
            default: // DELETE
                if (held == null || held.deleted) {
                    return "unknown segment \"" + u.segmentId() + "\"";
                }
                put(KnownSegment.tombstone(u.segmentId(), u.version()));
                releaseCopy(held);
                return null;
        }
    }

    private static void releaseCopy(KnownSegment s) {
        if (s != null && s.cacheKey != null) {
            SegmentCache.release(s.cacheKey);
        }
    }

    /** Gives back this table's shared bitmaps; call when the task closes. */
    public void close() {
        for (KnownSegment s : segments.values()) {
            releaseCopy(s);
        }
        segments.clear();
        byPriority = new KnownSegment[0];
        ruled.clear();
        shadowRuled.clear();
    }

    private void put(KnownSegment s) {
        segments.put(s.id, s);
        List<KnownSegment> live = new ArrayList<>();
        for (KnownSegment x : segments.values()) {
            if (!x.deleted) {
                live.add(x);
            }
        }
        live.sort(Comparator.<KnownSegment>comparingInt(x -> -x.priority).thenComparing(x -> x.id));
        byPriority = live.toArray(new KnownSegment[0]);
        ruled.clear();
        shadowRuled.clear();
    }

    /**
     * The segment whose rule applies to the user under {@code config}: a segmentId or {@code *}.
     */
    public String resolve(long userId, LimitConfig config) {
        // Segments without a rule are passed over once per config, not once per message.
        return resolve(userId, ruled.under(config, byPriority));
    }

    /** The same over the segments of the config's shadow rules (contract.md §4, §6). */
    public String resolveShadow(long userId, LimitConfig config) {
        return resolve(userId, shadowRuled.under(config, byPriority));
    }

    private String resolve(long userId, KnownSegment[] candidates) {
        if (candidates.length > 1) {
            // Start every segment's memory read before deciding on any: their cache misses then
            // overlap instead of following one another (random users of 300M across 8 segments:
            // see docs/benchmarks.md, segments).
            int touched = 0;
            for (KnownSegment s : candidates) {
                touched += s.base.touch(userId);
            }
            touchSink = touched;
        }
        for (KnownSegment s : candidates) {
            if (s.contains(userId)) {
                return s.id;
            }
        }
        return LimitConfig.DEFAULT_SEGMENT;
    }

    /** Segments held (not deleted). */
    public int size() {
        return byPriority.length;
    }

    /** Bytes of the bitmaps held, in memory. */
    public long bytes() {
        long n = 0;
        for (KnownSegment s : byPriority) {
            n +=
                    s.base.sizeInBytes()
                            + s.added.serializedSizeInBytes()
                            + s.removed.serializedSizeInBytes();
        }
        return n;
    }

    /** What state keeps, per segmentId: a JSON descriptor (see the class comment). */
    public Map<String, String> descriptors() {
        Map<String, String> out = new LinkedHashMap<>();
        for (KnownSegment s : segments.values()) {
            out.put(s.id, s.describe());
        }
        return out;
    }

    /** The descriptor of one segment, or null when the table never held it. */
    public String descriptor(String segmentId) {
        KnownSegment s = segments.get(segmentId);
        return s == null ? null : s.describe();
    }

    /**
     * Rebuilds a table from {@link #descriptors()}, re-reading uri-loaded bitmaps.
     *
     * @param problems collects what could not be restored as it was (a uri now unreadable or
     *     changed); such a segment keeps its deltas over what could be read
     */
    public static SegmentTable restore(
            Map<String, String> descriptors, SegmentLoader loader, List<String> problems)
            throws IOException {
        SegmentTable t = new SegmentTable();
        for (Map.Entry<String, String> e : descriptors.entrySet()) {
            String id = e.getKey();
            SegmentDescriptor d = SegmentDescriptor.parse(e.getValue());
            if (d.deleted()) {
                t.put(KnownSegment.tombstone(id, d.version()));
                continue;
            }
            SegmentBitmap base = SegmentBitmap.of();
            long crc = d.crc32();
            SegmentCache.Key key = null;
            try {
                if (d.uri() != null) {
                    SegmentCache.Key k =
                            new SegmentCache.Key(id, d.loadVersion(), d.uri(), d.format());
                    SegmentCache.Loaded loaded = SegmentCache.acquire(k, loader);
                    key = k;
                    base = loaded.bitmap();
                    if (loaded.crc32() != d.crc32()) {
                        problems.add(
                                "segment \""
                                        + id
                                        + "\": "
                                        + d.uri()
                                        + " changed since it was loaded (CRC-32)"
                                        + "; using its current content");
                    }
                    crc = loaded.crc32();
                } else {
                    crc = CheckedLoad.crc32(d.inline());
                    base = SegmentBitmap.read(d.inline(), d.format());
                }
            } catch (IOException | MalformedRecordException | RuntimeException ex) {
                problems.add(
                        "segment \""
                                + id
                                + "\": cannot re-read "
                                + d.uri()
                                + ": "
                                + ex.getMessage()
                                + "; holding only its deltas until the next full load");
            }
            t.put(
                    new KnownSegment(
                                    id,
                                    d.version(),
                                    d.priority(),
                                    new SegmentSource(d.format(), d.uri(), crc, d.inline()),
                                    base,
                                    d.added(),
                                    d.removed(),
                                    false)
                            .holding(key));
        }
        return t;
    }
}
