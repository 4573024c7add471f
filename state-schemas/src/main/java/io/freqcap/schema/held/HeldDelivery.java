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
 */
public record HeldDelivery(
        String messageId,
        long timestamp,
        long sendAt,
        byte[] key,
        byte[] value,
        String segment,
        long configVersion,
        String shadow) {

    /** A held message and the delivery it will be. */
    public static HeldDelivery of(String messageId, long timestamp, Delivery d) {
        return new HeldDelivery(
                messageId,
                timestamp,
                d.sendAt(),
                d.key(),
                d.value(),
                d.segment(),
                d.configVersion(),
                d.shadow());
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
