package io.freqcap.schema.decision;

import io.freqcap.schema.common.ArrayRecords;
import io.freqcap.schema.common.Bytes;

/**
 * One record for the audit topic: its Kafka key (the userId as text, or {@code null} when the user
 * is unknown) and the AuditRecord JSON. Equal when the bytes are equal.
 *
 * <p>Or, with {@code held}, a record of the held-messages topic (contract.md §12) riding with the
 * audit records: a HeldNotice, or a tombstone ({@code json} null), under {@code
 * <userId>/<messageId>}. It goes out in the audit sink's transactions, so that a tombstone is
 * committed with the FORGOTTEN, PREEMPTED or CANCELLED record that ended its hold, and a notice and
 * its tombstone, written by one producer, reach the topic in order.
 */
public record AuditEvent(byte[] key, byte[] json, boolean held) {
    /** An audit record. */
    public static AuditEvent audit(byte[] key, byte[] json) {
        return new AuditEvent(key, json, false);
    }

    /** A HeldNotice ({@code json}) or a tombstone ({@code json} null) for the held topic. */
    public static AuditEvent held(byte[] key, byte[] json) {
        return new AuditEvent(key, json, true);
    }

    @Override
    public boolean equals(Object o) {
        return ArrayRecords.equal(this, o);
    }

    @Override
    public String toString() {
        if (held) {
            return "HeldNotice[" + Bytes.describe(key) + ", " + Bytes.describe(json) + "]";
        }
        return "AuditEvent[" + Bytes.describe(json) + "]";
    }

    @Override
    public int hashCode() {
        return ArrayRecords.hash(this);
    }
}
