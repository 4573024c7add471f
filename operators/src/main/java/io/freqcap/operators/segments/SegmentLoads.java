package io.freqcap.operators.segments;

import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.segment.SegmentUpdate;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Segment files loaded off the task thread. A checked uri load whose bitmap this TaskManager does
 * not hold yet waits here while a loader thread reads it into the shared copy (retried; see {@link
 * CheckedLoad#acquire}); the task decides on the segments it holds meanwhile, and segment records
 * after it wait behind it, so that updates still apply in the order they arrived. The capping
 * function applies what is ready before each record it processes. What waits is part of every
 * snapshot ({@link #pending()}), so a checkpoint taken mid-load loses no update. A load that fails
 * past its retries fails the task when it is next asked for ({@link #ready}). Plain Java.
 */
public final class SegmentLoads {
    private static final ExecutorService LOADERS =
            Executors.newCachedThreadPool(
                    r -> {
                        Thread t = new Thread(r, "freqcap-segment-load");
                        t.setDaemon(true);
                        return t;
                    });

    private final SegmentLoader loader;
    private final CheckedLoad.Sleeper sleeper;
    private final Deque<ControlRecord> waiting = new ArrayDeque<>();
    private CompletableFuture<SegmentCache.Key> loading;
    private boolean closed;

    public SegmentLoads(SegmentLoader loader, CheckedLoad.Sleeper sleeper) {
        this.loader = loader;
        this.sleeper = sleeper;
    }

    /** Whether {@code rec} must wait: behind others, or for its file to be loaded. */
    public boolean mustWait(ControlRecord rec) {
        return rec.kind() == ControlRecord.Kind.SEGMENT && (!waiting.isEmpty() || key(rec) != null);
    }

    public void add(ControlRecord rec) {
        waiting.add(rec);
        startHead();
    }

    public boolean isEmpty() {
        return waiting.isEmpty();
    }

    /**
     * The next record that can be applied now, or null. Its file, if it had to be loaded, is in the
     * shared copy; {@link #applied} gives back this class's hold on it.
     *
     * @throws SegmentUnavailableException when the head's file could not be loaded
     */
    public ControlRecord ready() {
        if (waiting.isEmpty()) {
            return null;
        }
        startHead();
        if (loading != null) {
            if (!loading.isDone()) {
                return null;
            }
            try {
                loading.join();
            } catch (CompletionException e) {
                if (e.getCause() instanceof SegmentUnavailableException u) {
                    throw u;
                }
                throw new SegmentUnavailableException("loading a segment failed", e.getCause());
            }
        }
        return waiting.peekFirst();
    }

    /** The head returned by {@link #ready} was applied (or refused). */
    public void applied() {
        waiting.pollFirst();
        if (loading != null) {
            SegmentCache.release(loading.join());
            loading = null;
        }
        startHead();
    }

    private void startHead() {
        if (loading != null || waiting.isEmpty() || closed) {
            return;
        }
        ControlRecord head = waiting.peekFirst();
        SegmentCache.Key key = key(head);
        if (key == null) {
            return;
        }
        long crc = head.checkedCrc32();
        loading =
                CompletableFuture.supplyAsync(
                        () -> {
                            CheckedLoad.acquire(key, loader, crc, sleeper);
                            return key;
                        },
                        LOADERS);
    }

    /** The key of a checked uri load this TaskManager does not hold yet, else null. */
    private static SegmentCache.Key key(ControlRecord rec) {
        if (rec.kind() != ControlRecord.Kind.SEGMENT || rec.checkedCrc32() == null) {
            return null;
        }
        try {
            SegmentUpdate u = SegmentUpdate.parse(rec.value());
            if (u.op() != SegmentUpdate.Op.LOAD || u.uri() == null) {
                return null;
            }
            SegmentCache.Key key =
                    new SegmentCache.Key(u.segmentId(), u.version(), u.uri(), u.format());
            return SegmentCache.holds(key) ? null : key;
        } catch (Exception e) {
            return null; // applied (and refused) as any other record
        }
    }

    /** What waits, for a snapshot: one JSON line per record, in order. */
    public List<String> pending() {
        List<String> out = new ArrayList<>();
        for (ControlRecord r : waiting) {
            var node = Json.MAPPER.createObjectNode();
            node.put("kind", r.kind().name());
            node.put(
                    "value",
                    r.value() == null ? null : Base64.getEncoder().encodeToString(r.value()));
            node.put("topic", r.topic());
            node.put("partition", r.partition());
            node.put("offset", r.offset());
            if (r.checkedCrc32() != null) {
                node.put("checkedCrc32", r.checkedCrc32());
            }
            node.put("checkError", r.checkError());
            out.add(node.toString());
        }
        return out;
    }

    /** Puts back what a snapshot held ({@link #pending()}). */
    public void restore(Iterable<String> pending) throws Exception {
        for (String line : pending) {
            var n = Json.MAPPER.readTree(line);
            waiting.add(
                    new ControlRecord(
                            ControlRecord.Kind.valueOf(n.get("kind").asText()),
                            n.get("value").isNull()
                                    ? null
                                    : Base64.getDecoder().decode(n.get("value").asText()),
                            n.get("topic").asText(null),
                            n.get("partition").asInt(),
                            n.get("offset").asLong(),
                            n.has("checkedCrc32") ? n.get("checkedCrc32").asLong() : null,
                            n.get("checkError").isNull() ? null : n.get("checkError").asText()));
        }
    }

    /** Gives back a load's hold once it ends, if this task closes first. */
    public void close() {
        closed = true;
        if (loading != null) {
            loading.thenAccept(SegmentCache::release);
            loading = null;
        }
    }
}
