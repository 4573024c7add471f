package io.freqcap.schema.message;

import io.freqcap.schema.common.ArrayRecords;
import io.freqcap.schema.common.Bytes;

/**
 * A Kafka record as read, before any parsing, with where it came from so that an unreadable one can
 * be audited with its {@code source}. Equal when the bytes are equal.
 */
public record RawRecord(byte[] key, byte[] value, String topic, int partition, long offset) {
    @Override
    public boolean equals(Object o) {
        return ArrayRecords.equal(this, o);
    }

    @Override
    public String toString() {
        String source = topic + "-" + partition + "@" + offset;
        return "RawRecord[" + source + ", " + Bytes.describe(value) + "]";
    }

    @Override
    public int hashCode() {
        return ArrayRecords.hash(this);
    }
}
