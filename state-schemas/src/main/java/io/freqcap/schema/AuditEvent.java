package io.freqcap.schema;

/**
 * One record for the audit topic: its Kafka key (the userId as text, or {@code null} when the user
 * is unknown) and the AuditRecord JSON of SPEC §5.
 */
public record AuditEvent(byte[] key, byte[] json) {}
