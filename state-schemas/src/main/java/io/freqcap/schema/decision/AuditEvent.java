package io.freqcap.schema.decision;

import io.freqcap.schema.common.Bytes;
import java.util.Arrays;

/**
 * One record for the audit topic: its Kafka key (the userId as text, or {@code null} when the user
 * is unknown) and the AuditRecord JSON. Equal when the bytes are equal.
 */
public record AuditEvent(byte[] key, byte[] json) {
    @Override
    public boolean equals(Object o) {
        return o instanceof AuditEvent a
                && Arrays.equals(key, a.key)
                && Arrays.equals(json, a.json);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(key) + Arrays.hashCode(json);
    }

    @Override
    public String toString() {
        return "AuditEvent[" + Bytes.describe(json) + "]";
    }
}
