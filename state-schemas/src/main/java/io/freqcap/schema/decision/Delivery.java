package io.freqcap.schema.decision;

import io.freqcap.schema.common.Bytes;
import java.util.Arrays;
import java.util.Objects;

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

    /** A delivery without a shadow decision. */
    public Delivery(byte[] key, byte[] value, String decision, String segment, long configVersion) {
        this(key, value, decision, segment, configVersion, null, null);
    }

    /** A delivery of a message not held. */
    public Delivery(
            byte[] key,
            byte[] value,
            String decision,
            String segment,
            long configVersion,
            String shadow) {
        this(key, value, decision, segment, configVersion, shadow, null);
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
        return o instanceof Delivery d
                && Arrays.equals(key, d.key)
                && Arrays.equals(value, d.value)
                && Objects.equals(decision, d.decision)
                && Objects.equals(segment, d.segment)
                && configVersion == d.configVersion
                && Objects.equals(shadow, d.shadow)
                && Objects.equals(sendAt, d.sendAt);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                Arrays.hashCode(key), Arrays.hashCode(value), decision, segment, configVersion);
    }

    @Override
    public String toString() {
        return "Delivery["
                + decision
                + ", segment "
                + segment
                + ", v"
                + configVersion
                + (sendAt == null ? "" : ", send at " + sendAt)
                + ", "
                + Bytes.describe(value)
                + "]";
    }
}
