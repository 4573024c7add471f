package io.freqcap.schema.message;

import io.freqcap.schema.common.Bytes;
import java.util.Arrays;
import java.util.Objects;

/**
 * A Kafka record as read, before any parsing, with where it came from so that an unreadable one can
 * be audited with its {@code source}. Equal when the bytes are equal.
 */
public record RawRecord(byte[] key, byte[] value, String topic, int partition, long offset) {
    @Override
    public boolean equals(Object o) {
        return o instanceof RawRecord r
                && Arrays.equals(key, r.key)
                && Arrays.equals(value, r.value)
                && Objects.equals(topic, r.topic)
                && partition == r.partition
                && offset == r.offset;
    }

    @Override
    public int hashCode() {
        return Objects.hash(Arrays.hashCode(key), Arrays.hashCode(value), topic, partition, offset);
    }

    @Override
    public String toString() {
        return "RawRecord["
                + topic
                + "-"
                + partition
                + "@"
                + offset
                + ", "
                + Bytes.describe(value)
                + "]";
    }
}
