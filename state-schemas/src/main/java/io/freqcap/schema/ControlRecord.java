package io.freqcap.schema;

import java.util.Arrays;
import java.util.Objects;

/**
 * A record from a control topic, as read: a config or command ({@link Kind#CONFIG}) or a segment
 * update ({@link Kind#SEGMENT}); or a {@link Kind#SWEEP} tick that asks every capping instance to
 * clear the histories nothing can need any more. It is parsed by every parallel capping task, so
 * that all apply the same updates by version whatever order they see them in.
 */
public record ControlRecord(Kind kind, byte[] value, String topic, int partition, long offset) {
    public enum Kind {
        CONFIG,
        SEGMENT,
        SWEEP,
        /** Asks a capping task with a Redis mirror whether it owes the mirror a rebuild. */
        MIRROR_TICK
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ControlRecord c
                && kind == c.kind
                && Arrays.equals(value, c.value)
                && Objects.equals(topic, c.topic)
                && partition == c.partition
                && offset == c.offset;
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, Arrays.hashCode(value), topic, partition, offset);
    }

    @Override
    public String toString() {
        return "ControlRecord["
                + kind
                + " "
                + topic
                + "-"
                + partition
                + "@"
                + offset
                + ", "
                + Bytes.describe(value)
                + "]";
    }

    public static ControlRecord mirrorTick(long sequence) {
        return new ControlRecord(Kind.MIRROR_TICK, null, "mirror-tick", 0, sequence);
    }

    public static ControlRecord sweep(long sequence) {
        return new ControlRecord(Kind.SWEEP, null, "cleanup-tick", 0, sequence);
    }
}
