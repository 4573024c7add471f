package io.freqcap.operators.capping.decision;

import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.AuditRecords;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.mirror.MirrorWrite;
import java.nio.charset.StandardCharsets;

/**
 * A decided message and what it makes (contract.md §5): a delivery for ALLOWED and EXEMPT, an audit
 * record for the rest, a mirror write for ALLOWED when the mirror is on.
 *
 * @param channelsBefore the user's channels before an ALLOWED message was counted, when the mirror
 *     is on; else null
 * @param latestStamped the user's latest stamped timestamp once an ALLOWED message is counted
 */
public record Decided(
        OutboundMessage message,
        LimitConfig config,
        Verdict verdict,
        String[] channelsBefore,
        long latestStamped) {

    public Decision decision() {
        return verdict.decision();
    }

    /** Whether it goes to the delivery topic (ALLOWED, EXEMPT) rather than the audit topic. */
    public boolean delivered() {
        return decision() == Decision.ALLOWED || decision() == Decision.EXEMPT;
    }

    /**
     * The delivery: the input's bytes and key (the userId where it had none) with the decision's
     * headers. An ALLOWED delivery says what the shadow rules would have decided; EXEMPT ones do
     * not reach them.
     */
    public Delivery delivery(byte[] key, byte[] value) {
        byte[] k =
                key != null
                        ? key
                        : Long.toString(message.userId()).getBytes(StandardCharsets.UTF_8);
        String shadow = verdict.shadow() == null ? null : verdict.shadow().label();
        return new Delivery(
                k,
                value,
                decision().name(),
                verdict.segment(),
                config.version(),
                shadow,
                verdict.sendAt());
    }

    /**
     * The audit record of a message not delivered, its input kept within {@code maxRecordBytes}.
     */
    public AuditEvent audit(byte[] value, int maxRecordBytes) {
        return AuditRecords.decision(verdict, message, config.version(), value, maxRecordBytes);
    }

    /**
     * The FORGOTTEN audit record of a held message whose user was erased before its send time
     * (contract.md §5, §7): as a decision's record, with the send time it had.
     */
    public static AuditEvent forgotten(HeldDelivery h, int maxRecordBytes) {
        return withdrawn(h, Verdict.forgotten(h.segment(), h.sendAt()), maxRecordBytes);
    }

    /**
     * The CANCELLED audit record of a held message withdrawn before its send time (contract.md §5,
     * §7): as a decision's record, with the send time it had and why.
     */
    public static AuditEvent cancelled(HeldDelivery h, String reason, int maxRecordBytes) {
        return withdrawn(h, Verdict.cancelled(h.segment(), h.sendAt(), reason), maxRecordBytes);
    }

    private static AuditEvent withdrawn(HeldDelivery h, Verdict v, int maxRecordBytes) {
        return AuditRecords.decision(
                v, heldMessage(h), h.configVersion(), h.value(), maxRecordBytes);
    }

    /** The message a held delivery carries. */
    public static OutboundMessage heldMessage(HeldDelivery h) {
        try {
            return OutboundMessage.parse(h.value());
        } catch (MalformedRecordException e) {
            // It was read when it was decided: only a changed reader could refuse it now.
            throw new IllegalStateException("held message " + h.messageId() + " unreadable", e);
        }
    }

    /** Whether the message waits for a later send time (contract.md §5). */
    public boolean held() {
        return verdict.isHeld();
    }

    /** The Redis mirror's write for an ALLOWED message (the mirror on), scored at its send time. */
    public MirrorWrite mirrorWrite() {
        return MirrorWrite.counted(
                message.userId(),
                config.longestWindowMillis(),
                latestStamped,
                message.messageId(),
                verdict.isHeld() ? verdict.sendAt() : message.timestamp(),
                message.channel(),
                channelsBefore);
    }
}
