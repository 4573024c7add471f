package io.freqcap.schema.held;

import io.freqcap.schema.common.ArrayRecords;
import io.freqcap.schema.common.Bytes;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Delivery;

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
        long decided) {

    /** A held message and the delivery it will be. */
    public static HeldDelivery of(
            String messageId, long timestamp, int priority, long decided, Delivery d) {
        return new HeldDelivery(
                messageId,
                timestamp,
                d.sendAt(),
                d.key(),
                d.value(),
                d.segment(),
                d.configVersion(),
                d.shadow(),
                priority,
                decided);
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
                decided);
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
