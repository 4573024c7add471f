package io.freqcap.operators.capping.held;

import io.freqcap.operators.capping.outputs.CappingMetrics;
import io.freqcap.operators.capping.outputs.CappingOutputs;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.held.HeldDelivery;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.LongPredicate;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the capping operator does for held messages outside a record's decision: releases them at
 * their timers, writes their notices before a checkpoint's barrier, and makes the held topic whole
 * at a start and while transactions open at the start end ({@link HeldTopicStart}).
 *
 * @param setKey switches the keyed state backend's current key
 */
public record HeldSide(
        HeldMessages held,
        HeldTopicStart topicStart,
        CappingOutputs outputs,
        CappingMetrics metrics,
        LongConsumer setKey) {
    private static final Logger LOG = LoggerFactory.getLogger(HeldSide.class);

    /**
     * A held message's timer fired, its user the current key: delivers it, unless it was withdrawn
     * meanwhile.
     */
    public void release(
            long user,
            long sendAt,
            long fingerprint,
            Consumer<Delivery> out,
            Consumer<AuditEvent> audits)
            throws Exception {
        HeldDelivery h;
        try {
            h = held.release(user, sendAt, fingerprint);
        } catch (RuntimeException e) {
            // A defect reading what waits: failing the task would meet this timer again after
            // every restore. The job goes on and the log says which message; it may stay in
            // state without its timer (counted in heldNow).
            LOG.error(
                    "The held message of user {} due at {} (messageId fingerprint {}) could not"
                            + " be released",
                    user,
                    sendAt,
                    fingerprint,
                    e);
            metrics.undecided.inc();
            return;
        }
        if (h != null) {
            // Outside the guard: a sink's failure must fail the task.
            metrics.released.inc();
            outputs.to(audits, w -> {}, out).released(h);
        }
    }

    /**
     * A timer of freqcap 0.3 (no namespace): delivers the current user's messages held in its list
     * whose send time {@code now} has reached.
     */
    public void releaseLegacyDue(long now, CappingOutputs.Sink sink) throws Exception {
        metrics.released.inc(held.releaseLegacyDue(now, sink::released));
    }

    /** Once keyed state is restored: counts what waits, for the gauges. */
    public void load(KeyedStateBackend<Long> backend) throws Exception {
        held.load(backend, setKey);
    }

    /**
     * Once loaded, before any record: makes the held topic whole where this start must.
     *
     * @param owns whether a user's key group is this task's
     * @param first whether this is task 0
     */
    public void start(
            KeyedStateBackend<Long> backend,
            LongPredicate owns,
            boolean first,
            Consumer<AuditEvent> audits,
            Consumer<Delivery> deliveries)
            throws Exception {
        topicStart.makeWhole(
                backend, held, owns, first, setKey, outputs.to(audits, w -> {}, deliveries));
    }

    /**
     * After the start, now and then until it returns false: the keys that transactions open at the
     * start committed since, written again as held now ({@link HeldTopicStart#followUp}).
     */
    public boolean follow(Consumer<AuditEvent> audits, Consumer<Delivery> deliveries)
            throws Exception {
        return topicStart.followUp(held, setKey, outputs.to(audits, w -> {}, deliveries));
    }

    /**
     * Before each checkpoint's barrier and at the end of input: the notices of the messages held
     * since the last barrier ({@link io.freqcap.operators.capping.outputs.HeldNotices#flush}).
     */
    public void flushNotices(Consumer<AuditEvent> audits, Consumer<Delivery> deliveries) {
        if (outputs.notices() != null) {
            outputs.notices().flush(audits, deliveries);
        }
    }
}
