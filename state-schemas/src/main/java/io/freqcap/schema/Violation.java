package io.freqcap.schema;

/**
 * A limit a message would break.
 *
 * @param scope {@code all} or {@code channel:<name>}
 * @param count the most counted messages in scope that any interval of the window containing the
 *     message's timestamp already holds
 */
public record Violation(String scope, String window, int max, int count) {}
