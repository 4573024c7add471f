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
 * @param message the message as far as withdrawing it needs (cancelling, forgetting, preempting, an
 *     opt-out), so that none of them reads its value again: its id, user, channel, category,
 *     timestamp, campaign and priority (contract.md §2); no time zone
 * @param delivery its ALLOWED delivery, with the send time header: when it is delivered and counted
 *     ({@link Delivery#sendAt})
 * @param decided when it was decided, as a number that grows with every message its holder holds
 *     (so that preemption takes the most recently decided first among equals, contract.md §6); 0
 *     for messages held before freqcap knew priorities
 * @param heldBy what held it: the violations it broke at its timestamp, as the JSON array of
 *     contract.md §5's form ({@link HeldNotice}); null for a message held before freqcap wrote
 *     HeldNotices (0.4 and older)
 * @param timezone the zone its limits were read in (the message's, else the config's); null where
 *     held before freqcap kept it
 */
public record HeldDelivery(
        OutboundMessage message, Delivery delivery, long decided, byte[] heldBy, String timezone) {

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
                new OutboundMessage(
                        m.messageId(),
                        m.userId(),
                        m.channel(),
                        m.category(),
                        m.timestamp(),
                        null,
                        m.campaignId(),
                        m.priority()),
                new Delivery(
                        d.key(),
                        d.value(),
                        Decision.ALLOWED.name(),
                        d.segment(),
                        d.configVersion(),
                        d.shadow(),
                        d.sendAt()),
                decided,
                heldBy,
                timezone);
    }

    /** The same message held with another decision number (a holder numbers what it holds). */
    public HeldDelivery decidedAs(long decided) {
        return new HeldDelivery(message, delivery, decided, heldBy, timezone);
    }

    @Override
    public boolean equals(Object o) {
        return ArrayRecords.equal(this, o);
    }

    @Override
    public String toString() {
        return "HeldDelivery["
                + message.messageId()
                + " at "
                + delivery.sendAt()
                + ", "
                + Bytes.describe(delivery.value())
                + "]";
    }

    @Override
    public int hashCode() {
        return ArrayRecords.hash(this);
    }
}
