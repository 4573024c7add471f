package io.freqcap.operators.capping.outputs;

import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldNotice;
import io.freqcap.schema.history.Fingerprints;
import java.io.Serializable;
import java.util.HashSet;
import java.util.List;
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
 *   <li>a notice, and the tombstone of a message FORGOTTEN, PREEMPTED or CANCELLED, with the audit
 *       records ({@link AuditEvent#held}): the tombstone commits with the record that ended the
 *       hold;
 *   <li>the tombstone of a message delivered at its send time, with its delivery ({@link
 *       Delivery#heldTombstone}), in the delivery sink's transaction;
 *   <li>except when its notice went out since the last checkpoint: then its tombstone follows the
 *       notice through the audit sink. Records of one key must reach the topic in order, and two
 *       sinks are two producers, ordered only by the checkpoint between them. (Such a message was
 *       never visible as waiting: notice and tombstone commit together.)
 * </ul>
 *
 * <p>A message released at once (its send time already past) gets neither. A start without state,
 * or a restore from state written without the held topic, first tombstones every key the topic
 * still holds live and then writes a notice for every message held ({@code CappingOperator}).
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
         */
        List<byte[]> read(LongPredicate ownsUser, boolean ownsOthers) throws Exception;
    }

    private final Counter written;
    private final int maxRecordBytes;
    private final Supplier<String> configZone;

    /** Messages noticed since the last checkpoint, by {@link #id}; collisions only cost order. */
    private final Set<Long> noticedSinceCheckpoint = new HashSet<>();

    /**
     * @param written the {@code heldNotices} counter
     * @param configZone the config in force's zone, for messages held before freqcap kept theirs
     */
    public HeldNotices(Counter written, int maxRecordBytes, Supplier<String> configZone) {
        this.written = written;
        this.maxRecordBytes = maxRecordBytes;
        this.configZone = configZone;
    }

    /** A message held: its notice. */
    public void held(HeldDelivery h, Consumer<AuditEvent> audits) {
        audits.accept(notice(h));
        noticedSinceCheckpoint.add(id(h));
        written.inc();
    }

    /** The notice of a held message. */
    public AuditEvent notice(HeldDelivery h) {
        return AuditEvent.held(
                HeldNotice.key(h), HeldNotice.json(h, configZone.get(), maxRecordBytes));
    }

    /** A held message withdrawn (FORGOTTEN, PREEMPTED, CANCELLED): its tombstone, audited. */
    public void left(HeldDelivery h, Consumer<AuditEvent> audits) {
        audits.accept(AuditEvent.held(HeldNotice.key(h), null));
        written.inc();
    }

    /** A held message delivered: its tombstone, with the delivery unless noticed just now. */
    public void released(HeldDelivery h, Consumer<Delivery> out, Consumer<AuditEvent> audits) {
        if (noticedSinceCheckpoint.contains(id(h))) {
            left(h, audits);
            return;
        }
        out.accept(Delivery.heldTombstone(HeldNotice.key(h)));
        written.inc();
    }

    /** A key left live by an earlier job (or an earlier run without notices): its tombstone. */
    public void stale(byte[] key, Consumer<AuditEvent> audits) {
        audits.accept(AuditEvent.held(key, null));
        written.inc();
    }

    /** A checkpoint: what was noticed before it is committed before anything after it. */
    public void checkpointed() {
        noticedSinceCheckpoint.clear();
    }

    private static long id(HeldDelivery h) {
        return h.userId() * 0x9E3779B97F4A7C15L ^ Fingerprints.of(h.messageId());
    }
}
