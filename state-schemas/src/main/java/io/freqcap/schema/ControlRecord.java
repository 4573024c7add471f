package io.freqcap.schema;

/**
 * A record from a control topic, as read: a config or command ({@link Kind#CONFIG}) or a segment
 * update ({@link Kind#SEGMENT}). It is parsed by every parallel capping task, so that all apply the
 * same updates by version whatever order they see them in.
 */
public record ControlRecord(Kind kind, byte[] value, String topic, int partition, long offset) {
    public enum Kind {
        CONFIG,
        SEGMENT
    }
}
