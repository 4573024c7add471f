package io.freqcap.schema.held;

import io.freqcap.schema.common.ArrayRecords;
import io.freqcap.schema.common.Bytes;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.OutboundMessage;

/**
 * A message ALLOWED with a later send time, waiting in keyed state for it (contract.md §5): what
 * its delivery will carry, byte for byte, and when.
 *
 * @param timestamp the message's own timestamp
 * @param sendAt when it is delivered and counted
 * @param key the input record's key, or the userId where it had none
 * @param shadow the shadow decision's word for the header, or null
 * @param priority the message's priority (contract.md §2)
 * @param decided when it was decided, as a number that grows with every message its holder holds
 *     (so that preemption takes the most recently decided first among equals, contract.md §6); 0
 *     for messages held before freqcap knew priorities
 * @param userId, channel, category, campaignId the message's own (campaignId null for none): what
 *     withdrawing it needs (cancelling, forgetting, preempting, an opt-out), so that none of them
 *     reads its value again
 * @param heldBy what held it: the violations it broke at its timestamp, as the JSON array of
 *     contract.md §5's form ({@link HeldNotice}); null for a message held before freqcap wrote
 *     HeldNotices (0.4 and older)
 * @param timezone the zone its limits were read in (the message's, else the config's); null where
 *     held before freqcap kept it
 */
public record HeldDelivery(
        String messageId,
        long timestamp,
        long sendAt,
        byte[] key,
        byte[] value,
        String segment,
        long configVersion,
        String shadow,
        int priority,
        long decided,
        long userId,
        String channel,
        String category,
        String campaignId,
        byte[] heldBy,
        String timezone) {

    /** A held message and the delivery it will be, without the reason it waits (tests). */
    public static HeldDelivery of(OutboundMessage m, long decided, Delivery d) {
        return of(m, decided, d, null, null);
    }

    /**
     * A held message and the delivery it will be.
     *
     * @param heldBy the JSON array of the violations that held it
     * @param timezone the zone its limits were read in
     */
    public static HeldDelivery of(
            OutboundMessage m, long decided, Delivery d, byte[] heldBy, String timezone) {
        return new HeldDelivery(
                m.messageId(),
                m.timestamp(),
                d.sendAt(),
                d.key(),
                d.value(),
                d.segment(),
                d.configVersion(),
                d.shadow(),
                m.priority(),
                decided,
                m.userId(),
                m.channel(),
                m.category(),
                m.campaignId(),
                heldBy,
                timezone);
    }

    /** The message it is, as far as capping reads one (no time zone: withdrawing needs none). */
    public OutboundMessage message() {
        return new OutboundMessage(
                messageId, userId, channel, category, timestamp, null, campaignId, priority);
    }

    /** The same message held with another decision number (a holder numbers what it holds). */
    public HeldDelivery decidedAs(long decided) {
        return new HeldDelivery(
                messageId,
                timestamp,
                sendAt,
                key,
                value,
                segment,
                configVersion,
                shadow,
                priority,
                decided,
                userId,
                channel,
                category,
                campaignId,
                heldBy,
                timezone);
    }

    /** Its ALLOWED delivery, with the send time header. */
    public Delivery delivery() {
        return new Delivery(
                key, value, Decision.ALLOWED.name(), segment, configVersion, shadow, sendAt);
    }

    @Override
    public boolean equals(Object o) {
        return ArrayRecords.equal(this, o);
    }

    @Override
    public String toString() {
        return "HeldDelivery[" + messageId + " at " + sendAt + ", " + Bytes.describe(value) + "]";
    }

    @Override
    public int hashCode() {
        return ArrayRecords.hash(this);
    }
}
