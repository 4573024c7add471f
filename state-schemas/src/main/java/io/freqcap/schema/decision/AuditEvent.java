package io.freqcap.schema.decision;

import io.freqcap.schema.common.ArrayRecords;
import io.freqcap.schema.common.Bytes;

/**
 * One record for the audit topic: its Kafka key (the userId as text, or {@code null} when the user
 * is unknown) and the AuditRecord JSON. Equal when the bytes are equal.
 */
public record AuditEvent(byte[] key, byte[] json) {
    @Override
    public boolean equals(Object o) {
        return ArrayRecords.equal(this, o);
    }

    @Override
    public String toString() {
        return "AuditEvent[" + Bytes.describe(json) + "]";
    }

    @Override
    public int hashCode() {
        return ArrayRecords.hash(this);
    }
}
