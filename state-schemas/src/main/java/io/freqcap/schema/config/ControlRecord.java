package io.freqcap.schema.config;

import io.freqcap.schema.common.ArrayRecords;
import io.freqcap.schema.common.Bytes;

/**
 * A record from a control topic, as read: a config or command ({@link Kind#CONFIG}) or a segment
 * update ({@link Kind#SEGMENT}); or a {@link Kind#SWEEP} tick that asks every capping instance to
 * clear the histories nothing can need any more. It is parsed by every parallel capping task, so
 * that all apply the same updates by version whatever order they see them in.
 *
 * <p>A segment load from a uri is read and checked once before it is broadcast: {@code
 * checkedCrc32} is then the CRC-32 of the file found good, or {@code checkError} why it is not.
 * Both null: not checked (a record that is no such load).
 */
public record ControlRecord(
        Kind kind,
        byte[] value,
        String topic,
        int partition,
        long offset,
        Long checkedCrc32,
        String checkError) {
    public enum Kind {
        CONFIG,
        SEGMENT,
        SWEEP,
        /** Asks a capping task with a Redis mirror whether it owes the mirror a rebuild. */
        MIRROR_TICK
    }

    /** A record as read from a topic, not checked. */
    public ControlRecord(Kind kind, byte[] value, String topic, int partition, long offset) {
        this(kind, value, topic, partition, offset, null, null);
    }

    /** This record with the outcome of the check of its segment file. */
    public ControlRecord checked(Long crc32, String error) {
        return new ControlRecord(kind, value, topic, partition, offset, crc32, error);
    }

    @Override
    public boolean equals(Object o) {
        return ArrayRecords.equal(this, o);
    }

    @Override
    public String toString() {
        String checked =
                (checkedCrc32 != null ? ", checked crc32 " + checkedCrc32 : "")
                        + (checkError != null ? ", check failed: " + checkError : "");
        return String.format(
                "ControlRecord[%s %s-%d@%d, %s%s]",
                kind, topic, partition, offset, Bytes.describe(value), checked);
    }

    public static ControlRecord mirrorTick(long sequence) {
        return new ControlRecord(Kind.MIRROR_TICK, null, "mirror-tick", 0, sequence);
    }

    public static ControlRecord sweep(long sequence) {
        return new ControlRecord(Kind.SWEEP, null, "cleanup-tick", 0, sequence);
    }

    @Override
    public int hashCode() {
        return ArrayRecords.hash(this);
    }
}
