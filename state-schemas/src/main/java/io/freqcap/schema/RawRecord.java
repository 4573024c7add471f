package io.freqcap.schema;

/**
 * A Kafka record as read, before any parsing, with where it came from so that an unreadable one can
 * be audited with its {@code source} (SPEC §5).
 */
public record RawRecord(byte[] key, byte[] value, String topic, int partition, long offset) {}
