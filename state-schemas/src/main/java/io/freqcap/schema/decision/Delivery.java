package io.freqcap.schema.decision;

import io.freqcap.schema.common.ArrayRecords;
import io.freqcap.schema.common.Bytes;

/**
 * A message allowed through (ALLOWED or EXEMPT): the input key and value byte for byte, and the
 * headers of contract.md §5.
 *
 * @param shadow what the shadow rules would have decided (ALLOWED, HELD or REJECTED), or null
 * @param sendAt a held message's send time, or null for one not held
 */
public record Delivery(
        byte[] key,
        byte[] value,
        String decision,
        String segment,
        long configVersion,
        String shadow,
        Long sendAt) {

    /**
     * The decision word of a record for the held-messages topic (contract.md §12) that rides with
     * the deliveries, in the delivery sink's transaction: never a delivery itself.
     */
    public static final String HELD_TOPIC = "held-topic";

    /**
     * A record of the held topic under {@code key} ({@code <userId>/<messageId>}): a HeldNotice, or
     * a tombstone when {@code json} is null.
     */
    public static Delivery heldTopic(byte[] key, byte[] json) {
        return new Delivery(key, json, HELD_TOPIC, null, 0, null, null);
    }

    /** Whether this is a record of the held topic, not a delivery. */
    public boolean isHeldTopic() {
        return HELD_TOPIC.equals(decision);
    }

    /** On a held message's delivery: its send time, epoch ms as decimal text. */
    public static final String HEADER_SEND_AT = "freqcap-send-at";

    public static final String HEADER_DECISION = "freqcap-decision";
    public static final String HEADER_SEGMENT = "freqcap-segment";
    public static final String HEADER_CONFIG_VERSION = "freqcap-config-version";

    /** On ALLOWED deliveries when the config has shadow rules: what they would have decided. */
    public static final String HEADER_SHADOW = "freqcap-shadow";

    @Override
    public boolean equals(Object o) {
        return ArrayRecords.equal(this, o);
    }

    @Override
    public String toString() {
        String held = sendAt == null ? "" : ", send at " + sendAt;
        return String.format(
                "Delivery[%s, segment %s, v%d%s, %s]",
                decision, segment, configVersion, held, Bytes.describe(value));
    }

    @Override
    public int hashCode() {
        return ArrayRecords.hash(this);
    }
}
