package io.freqcap.schema;

/**
 * A message allowed through (ALLOWED or EXEMPT): the input key and value byte for byte, and the
 * headers of SPEC §5.
 */
public record Delivery(
        byte[] key, byte[] value, String decision, String segment, long configVersion) {

    public static final String HEADER_DECISION = "freqcap-decision";
    public static final String HEADER_SEGMENT = "freqcap-segment";
    public static final String HEADER_CONFIG_VERSION = "freqcap-config-version";
}
