package io.freqcap.operators.capping.outputs;

import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldNotice;
import io.freqcap.schema.history.Fingerprints;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
 *   <li>a notice, and the tombstone of a message FORGOTTEN, PREEMPTED or CANCELLED, with the audit
 *       records ({@link AuditEvent#held}): the tombstone commits with the record that ended the
 *       hold;
 *   <li>the tombstone of a message delivered at its send time, with its delivery ({@link
 *       Delivery#heldTopic}), in the delivery sink's transaction;
 *   <li>except where a record of the same key went out since the last checkpoint: then it takes
 *       that record's way. Records of one key must reach the topic in order, and two sinks are two
 *       producers, ordered only by the checkpoint between them (each flushes before the barrier,
 *       chained to this operator). So a message noticed and released between two checkpoints has
 *       both records in the audit sink's transaction (it was never visible as waiting), and a
 *       message released, un-counted by a failed receipt, sent again and held again has its new
 *       notice after its tombstone, with the deliveries.
 * </ul>
 *
 * <p>A message released at once (its send time already past) gets neither. Every start makes the
 * topic match the held state before the first record ({@code HeldTopicStart}).
 */
public final class HeldNotices {
    /**
     * The held topic as a start reads it: the keys whose latest record is a notice, from the
     * topic's beginning, read committed. Serializable: made where the job is built, read in each
     * task.
     */
    public interface LiveKeys extends Serializable {
        /**
         * The live keys this task owns.
         *
         * @param ownsUser whether a user's key group is this task's
         * @param ownsOthers whether this task also takes the keys that name no userId (one task
         *     does)
         * @param waitForOpen whether to wait a little for transactions open on the topic to end (a
         *     start without state: an earlier job's, which the restarted sinks abort); a restore
         *     reads what is committed, since the transactions open then are its own checkpoint's,
         *     consistent with its state, or ones that will abort
         */
        List<byte[]> read(LongPredicate ownsUser, boolean ownsOthers, boolean waitForOpen)
                throws Exception;
    }

    private final Counter written;
    private final int maxRecordBytes;
    private final Supplier<String> configZone;

    /**
     * The keys written since the last checkpoint, by a 64-bit hash of the key: true when through
     * the delivery sink. Every later record of such a key until the next checkpoint takes the same
     * way, so that one producer writes them in order.
     */
    private final Map<Long, Boolean> sinceCheckpoint = new HashMap<>();

    /**
     * @param written the {@code heldNotices} counter
     * @param configZone the config in force's zone, for messages held before freqcap kept theirs
     */
    public HeldNotices(Counter written, int maxRecordBytes, Supplier<String> configZone) {
        this.written = written;
        this.maxRecordBytes = maxRecordBytes;
        this.configZone = configZone;
    }

    /** A message held: its notice, with the audit records. */
    public void held(HeldDelivery h, Consumer<AuditEvent> audits, Consumer<Delivery> deliveries) {
        write(HeldNotice.key(h), notice(h), false, audits, deliveries);
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
        write(HeldNotice.key(h), null, false, audits, deliveries);
    }

    /** A held message delivered: its tombstone, with the deliveries. */
    public void released(
            HeldDelivery h, Consumer<AuditEvent> audits, Consumer<Delivery> deliveries) {
        write(HeldNotice.key(h), null, true, audits, deliveries);
    }

    /** A key left live by an earlier job (or an earlier run without notices): its tombstone. */
    public void stale(byte[] key, Consumer<AuditEvent> audits, Consumer<Delivery> deliveries) {
        write(key, null, false, audits, deliveries);
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
        Long id = Fingerprints.of(new String(key, StandardCharsets.UTF_8));
        Boolean taken = sinceCheckpoint.putIfAbsent(id, withDeliveries);
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
    }
}
