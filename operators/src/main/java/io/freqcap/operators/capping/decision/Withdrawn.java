package io.freqcap.operators.capping.decision;

import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.AuditRecords;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.message.OutboundMessage;

/**
 * The outcome of a held message withdrawn before its send time (contract.md §5, §6, §7): its audit
 * record replaces its delivery, written as a decision's record with the send time it had.
 */
public final class Withdrawn {
    private Withdrawn() {}

    /** The FORGOTTEN record of a held message whose user was erased. */
    public static AuditEvent forgotten(HeldDelivery h, int maxRecordBytes) {
        return record(
                h,
                Verdict.forgotten(h.delivery().segment(), h.delivery().sendAt()),
                maxRecordBytes);
    }

    /** The CANCELLED record of a held message, and why. */
    public static AuditEvent cancelled(HeldDelivery h, String reason, int maxRecordBytes) {
        return record(
                h,
                Verdict.cancelled(h.delivery().segment(), h.delivery().sendAt(), reason),
                maxRecordBytes);
    }

    /**
     * The PREEMPTED record of a held message whose place {@code by}, of higher priority, took
     * (contract.md §5, §6).
     */
    public static AuditEvent preempted(HeldDelivery h, OutboundMessage by, int maxRecordBytes) {
        return record(
                h,
                preempted(
                        h.delivery().segment(), h.delivery().sendAt(), h.message().priority(), by),
                maxRecordBytes);
    }

    /** The verdict on a held message of {@code priority} whose place {@code by} took. */
    public static Verdict preempted(String segment, long sendAt, int priority, OutboundMessage by) {
        String reason =
                "preempted by "
                        + by.messageId()
                        + " (priority "
                        + by.priority()
                        + " over "
                        + priority
                        + ")";
        return Verdict.preempted(segment, sendAt, by.messageId(), reason);
    }

    private static AuditEvent record(HeldDelivery h, Verdict v, int maxRecordBytes) {
        return AuditRecords.decision(
                v, h.message(), h.delivery().configVersion(), h.delivery().value(), maxRecordBytes);
    }
}
