package io.freqcap.operators.capping.outputs;

import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldNotice;
import io.freqcap.schema.history.Fingerprints;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.LongPredicate;
import java.util.function.Supplier;
import org.apache.flink.metrics.Counter;

/**
 * The held-messages topic's records (contract.md §12), as the capping task writes them: a
 * HeldNotice when a message is held, a tombstone when it leaves the hold, whichever way.
 *
 * <p><b>Which sink carries them.</b> They ride the job's own sinks, never a sink of their own, so
 * that each goes out in the transaction of the record it belongs with:
 *
 * <ul>
 *   <li>the tombstone of a message FORGOTTEN, PREEMPTED or CANCELLED with the audit records ({@link
 *       AuditEvent#held}): it commits with the record that ended the hold;
 *   <li>the tombstone of a message delivered at its send time with its delivery ({@link
 *       Delivery#heldTopic}), in the delivery sink's transaction;
 *   <li>a notice with the audit records, written when the checkpoint's barrier comes ({@link
 *       #flush}), not when the message is held: a hold that ends before the barrier then has only
 *       its tombstone, in the transaction of the record that ended it. (Written at once, its notice
 *       would be in the audit sink's transaction and its tombstone would have to follow it there to
 *       stay in order, ahead of its delivery: a {@code read_committed} reader could see the
 *       tombstone first.) Under {@code at-least-once} nothing is transactional: notices go out at
 *       once.
 *   <li>Records of one key must reach the topic in order, and two sinks are two producers, ordered
 *       only by the checkpoint between them (each flushes before the barrier, chained to this
 *       operator). So where a record of a key went out since the last checkpoint, the key's next
 *       record takes its way: a notice after a tombstone with the deliveries (a message released,
 *       un-counted by a failed receipt, sent again and held again) goes with the deliveries; a
 *       tombstone after a tombstone is not written again.
 * </ul>
 *
 * <p>A message released at once (its send time already past) gets neither. Every start makes the
 * topic match the held state before the first record ({@code HeldTopicStart}).
 */
public final class HeldNotices {
    private static final org.slf4j.Logger LOG =
            org.slf4j.LoggerFactory.getLogger(HeldNotices.class);

    /**
     * The held topic as a start reads it: the keys whose latest record is a notice, from the
     * topic's beginning, read committed; then, in the background, what the transactions open at the
     * start go on to commit. Serializable: made where the job is built, read in each task.
     */
    public interface LiveKeys extends Serializable {
        /**
         * The live keys this task owns, as committed now (never waiting for a transaction open on
         * the topic), and a follow of the records such transactions commit later.
         *
         * @param ownsUser whether a user's key group is this task's
         * @param ownsOthers whether this task also takes the keys that name no userId (one task
         *     does)
         */
        Start read(LongPredicate ownsUser, boolean ownsOthers) throws Exception;

        /**
         * Whether the job's sinks write in transactions ({@code exactly-once}, the default): then a
         * notice waits for the checkpoint's barrier ({@link HeldNotices#flush}).
         */
        default boolean transactional() {
            return true;
        }
    }

    /**
     * What a start read: the live keys it owns, committed then, and what it reads on.
     *
     * @param live the keys, each once
     */
    public record Start(List<byte[]> live, Later later) {
        /** Nothing was open at the start. */
        public static Start of(List<byte[]> live) {
            return new Start(live, Later.NONE);
        }
    }

    /**
     * The records the transactions open at a start commit later (an earlier run's, another job's,
     * any writer's left open): the keys of them this task owns, each time one is read, until the
     * reader is past where the topic ended at the start. Read in the background; polled by the
     * task.
     */
    public interface Later extends AutoCloseable {
        Later NONE =
                new Later() {
                    @Override
                    public List<byte[]> poll() {
                        return List.of();
                    }

                    @Override
                    public boolean done() {
                        return true;
                    }

                    @Override
                    public void close() {}
                };

        /** The keys read since the last poll (the task's own), possibly none. */
        List<byte[]> poll();

        /** Whether every record before the start's end of the topic was read (and polled). */
        boolean done();

        @Override
        void close();
    }

    private final Counter written;
    private final int maxRecordBytes;
    private final Supplier<String> configZone;
    private final boolean transactional;

    /** Notices waiting for the barrier (transactional only), by key hash: key and notice. */
    private final Map<Long, byte[][]> pending = new LinkedHashMap<>();

    /**
     * The keys written since the last checkpoint, by a 64-bit hash of the key: true when through
     * the delivery sink. Every later record of such a key until the next checkpoint takes the same
     * way, so that one producer writes them in order.
     */
    private final Map<Long, Boolean> sinceCheckpoint = new HashMap<>();

    /** The keys whose latest record since the last checkpoint is a tombstone, by key hash. */
    private final Set<Long> deadSinceCheckpoint = new HashSet<>();

    /**
     * @param written the {@code heldNotices} counter
     * @param configZone the config in force's zone, for messages held before freqcap kept theirs
     * @param transactional whether the sinks write in transactions ({@code exactly-once}): then
     *     notices wait for the barrier
     */
    public HeldNotices(
            Counter written,
            int maxRecordBytes,
            Supplier<String> configZone,
            boolean transactional) {
        this.written = written;
        this.maxRecordBytes = maxRecordBytes;
        this.configZone = configZone;
        this.transactional = transactional;
    }

    /**
     * A message held: its notice, with the audit records (at the barrier, transactional).
     *
     * @return false when the notice cannot be built (a defect at some edge): logged, not fatal,
     *     since a restart would meet it again; the next start's check writes it if it can
     */
    public boolean held(
            HeldDelivery h, Consumer<AuditEvent> audits, Consumer<Delivery> deliveries) {
        byte[] key;
        byte[] json;
        try {
            key = HeldNotice.key(h);
            json = notice(h);
        } catch (RuntimeException e) {
            LOG.error("The held-topic notice of {} could not be built", h.message().messageId(), e);
            return false;
        }
        if (transactional) {
            pending.put(idOf(key), new byte[][] {key, json});
        } else {
            write(key, json, false, audits, deliveries);
        }
        return true;
    }

    /**
     * The checkpoint's barrier comes (or the end of input): the notices of the messages held since
     * the last one and still held, so that they commit with this checkpoint.
     */
    public void flush(Consumer<AuditEvent> audits, Consumer<Delivery> deliveries) {
        for (byte[][] n : pending.values()) {
            write(n[0], n[1], false, audits, deliveries);
        }
        pending.clear();
    }

    /** The notice of a held message. */
    byte[] notice(HeldDelivery h) {
        return HeldNotice.json(h, configZone.get(), maxRecordBytes);
    }

    /**
     * A held message withdrawn (FORGOTTEN, PREEMPTED, CANCELLED): its tombstone, with the audit
     * records.
     */
    public void left(HeldDelivery h, Consumer<AuditEvent> audits, Consumer<Delivery> deliveries) {
        tombstone(HeldNotice.key(h), false, audits, deliveries);
    }

    /** A held message delivered: its tombstone, with the deliveries. */
    public void released(
            HeldDelivery h, Consumer<AuditEvent> audits, Consumer<Delivery> deliveries) {
        tombstone(HeldNotice.key(h), true, audits, deliveries);
    }

    /** A key left live by an earlier job (or an earlier run without notices): its tombstone. */
    public void stale(byte[] key, Consumer<AuditEvent> audits, Consumer<Delivery> deliveries) {
        tombstone(key, false, audits, deliveries);
    }

    /**
     * A key's tombstone. Transactional, its notice may still wait for the barrier (it is dropped:
     * the key may have been live before, so the tombstone is still written), and only tombstones go
     * out between two barriers: one of this key since the last is enough.
     */
    private void tombstone(
            byte[] key,
            boolean withDeliveries,
            Consumer<AuditEvent> audits,
            Consumer<Delivery> deliveries) {
        if (transactional) {
            long id = idOf(key);
            pending.remove(id);
            if (deadSinceCheckpoint.contains(id)) {
                return;
            }
        }
        write(key, null, withDeliveries, audits, deliveries);
    }

    private static long idOf(byte[] key) {
        return Fingerprints.of(new String(key, StandardCharsets.UTF_8));
    }

    /**
     * Writes a record of the held topic the way its key's records took since the last checkpoint,
     * else the way it belongs with ({@code withDeliveries}).
     */
    private void write(
            byte[] key,
            byte[] json,
            boolean withDeliveries,
            Consumer<AuditEvent> audits,
            Consumer<Delivery> deliveries) {
        long id = idOf(key);
        Boolean taken = sinceCheckpoint.putIfAbsent(id, withDeliveries);
        if (json == null) {
            deadSinceCheckpoint.add(id);
        } else {
            deadSinceCheckpoint.remove(id);
        }
        if (taken != null ? taken : withDeliveries) {
            deliveries.accept(Delivery.heldTopic(key, json));
        } else {
            audits.accept(AuditEvent.held(key, json));
        }
        written.inc();
    }

    /** A checkpoint: what was written before it reached the log before anything after it. */
    public void checkpointed() {
        sinceCheckpoint.clear();
        deadSinceCheckpoint.clear();
    }
}
