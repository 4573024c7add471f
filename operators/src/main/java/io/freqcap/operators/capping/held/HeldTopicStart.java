package io.freqcap.operators.capping.held;

import io.freqcap.operators.capping.outputs.CappingOutputs;
import io.freqcap.operators.capping.outputs.HeldNotices;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldNotice;
import io.freqcap.schema.history.Fingerprints;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongConsumer;
import java.util.function.LongPredicate;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the held topic agree with the held state when a task starts (contract.md §12), before it
 * decides anything: each task reads the topic's live keys of its key groups (task 0 also those that
 * name no user), writes a notice for every message it holds that has none, and a tombstone for
 * every live key it does not hold.
 *
 * <p>A start reads what is committed and never waits for a transaction open on the topic (an
 * earlier run's, another job's, any writer's left open): what such a transaction commits later is
 * read in the background ({@link HeldNotices.Later}), and each key of this task's that it names is
 * written again as the task holds it then ({@link #followUp}): a notice if held, else a tombstone.
 * So once those transactions have ended and the task has taken a checkpoint after, the topic's live
 * keys are what it holds (contract.md §12).
 *
 * <p>After a restore from the job's own checkpoint this finds nothing to write: notices and
 * tombstones were committed with the checkpoint. It matters after a start without state (what an
 * earlier job held was lost with its state), a restore from state written without {@code
 * --held-topic} (the option added on an upgrade), a rollback to an older savepoint (the topic has
 * what the later run wrote), a topic deleted and created again, and {@code at-least-once} (a failed
 * attempt's records are not rolled back). It costs a read of the topic and of the held messages'
 * keys at each start.
 */
public final class HeldTopicStart {
    private static final Logger LOG = LoggerFactory.getLogger(HeldTopicStart.class);

    private final HeldNotices.LiveKeys topic;
    private final boolean restored;
    private HeldNotices.Later later = HeldNotices.Later.NONE;

    /**
     * @param topic the held topic, or null without {@code --held-topic}
     * @param restored whether the task starts from a checkpoint or savepoint
     */
    public HeldTopicStart(HeldNotices.LiveKeys topic, boolean restored) {
        this.topic = topic;
        this.restored = restored;
    }

    /** A message by its user and the fingerprint of its messageId. */
    private record Held(long user, long fingerprint) {}

    /**
     * Writes the notices and tombstones that make the topic's live keys of this task what it holds:
     * first the tombstones, then the notices, so that where a key a notice is written under was
     * also taken for another (a messageId that UTF-8 cannot carry whole), the notice is last.
     *
     * @param owns whether a user's key group is this task's
     * @param first whether this is task 0, which also tombstones keys that name no user
     * @param setKey switches the backend's current key
     */
    public void makeWhole(
            KeyedStateBackend<Long> backend,
            HeldMessages held,
            LongPredicate owns,
            boolean first,
            LongConsumer setKey,
            CappingOutputs.Sink sink)
            throws Exception {
        if (topic == null) {
            return;
        }
        long started = System.nanoTime();
        HeldNotices.Start start = topic.read(owns, first);
        later = start.later();
        List<byte[]> live = start.live();
        Map<Held, List<byte[]>> unmatched = new HashMap<>();
        List<byte[]> stale = new ArrayList<>();
        for (byte[] key : live) {
            Held h = heldOf(key);
            if (h == null) {
                stale.add(key); // not a key this job writes
            } else {
                unmatched.computeIfAbsent(h, k -> new ArrayList<>(1)).add(key);
            }
        }
        // The held messages' keys only: those the topic has are matched, the others noted.
        Set<Held> missing = new HashSet<>();
        held.forEach(
                backend,
                setKey,
                (user, fingerprint) -> {
                    Held h = new Held(user, fingerprint);
                    if (unmatched.remove(h) == null) {
                        missing.add(h);
                    }
                    return false;
                },
                h -> {});
        unmatched.values().forEach(stale::addAll);
        for (byte[] key : stale) {
            sink.staleKey(key);
        }
        long[] noticed = {0};
        if (!missing.isEmpty()) {
            held.forEach(
                    backend,
                    setKey,
                    (user, fingerprint) -> missing.contains(new Held(user, fingerprint)),
                    h -> {
                        if (notice(h, sink)) {
                            noticed[0]++;
                        }
                    });
        }
        LOG.info(
                "held topic checked at start in {} ms: {} keys live, {} tombstoned (nothing"
                        + " holds them), {} held messages noticed (the topic lacked them)",
                (System.nanoTime() - started) / 1_000_000,
                live.size(),
                stale.size(),
                noticed[0]);
    }

    /**
     * Writes again, as the task holds them now, the keys that transactions open at the start have
     * committed since: a notice for a held message, a tombstone for any other key.
     *
     * @return whether it follows on (transactions of the start may still commit)
     */
    public boolean followUp(HeldMessages held, LongConsumer setKey, CappingOutputs.Sink sink)
            throws Exception {
        for (byte[] key : later.poll()) {
            Held h = heldOf(key);
            Long user = h == null ? HeldNotice.userOf(key) : Long.valueOf(h.user());
            HeldDelivery d = null;
            if (user != null) {
                setKey.accept(user);
                d = h == null ? null : held.withFingerprint(h.fingerprint());
                if (d == null && hasReplacement(key)) {
                    // A messageId UTF-8 cannot carry whole (held by a release that read such
                    // ids; today's refuse them) has a '?' for it in its key, which names another
                    // fingerprint.
                    d = held.withNoticeKey(key);
                }
            }
            if (d == null) {
                sink.staleKey(key);
            } else {
                notice(d, sink);
            }
        }
        if (later.done()) {
            later.close();
            later = HeldNotices.Later.NONE;
            return false;
        }
        return true;
    }

    /** A held message's notice; false when it cannot be built (logged by the notices). */
    private static boolean notice(HeldDelivery h, CappingOutputs.Sink sink) {
        return sink.reconciled(h);
    }

    /** Whether a key has a '?', which UTF-8 writes for a character it cannot carry. */
    private static boolean hasReplacement(byte[] key) {
        for (byte b : key) {
            if (b == '?') {
                return true;
            }
        }
        return false;
    }

    /** Stops the follow (the task closes). */
    public void close() {
        later.close();
    }

    /**
     * The message a key names, or null for a key that is not {@code <userId>/<messageId>} as this
     * job writes it (the userId in decimal without leading zeros or sign).
     */
    private static Held heldOf(byte[] key) {
        Long user = HeldNotice.userOf(key);
        if (user == null) {
            return null;
        }
        String k = new String(key, StandardCharsets.UTF_8);
        int slash = k.indexOf('/');
        if (!k.substring(0, slash).equals(Long.toString(user))) {
            return null;
        }
        return new Held(user, Fingerprints.of(k.substring(slash + 1)));
    }
}
