package io.freqcap.schema.decision;

import io.freqcap.schema.config.Limit;

/**
 * A limit a message would break.
 *
 * @param scope {@code all}, {@code channel:<name>}, {@code category:<name>} or {@code
 *     campaign:<campaignId>}
 * @param window a rolling limit's window; null for a calendar limit
 * @param calendar a calendar limit's period; null for a rolling limit
 * @param count for a rolling limit the most counted messages in scope that any interval of the
 *     window containing the message's timestamp already holds; for a calendar limit the counted
 *     messages in scope in the message's period
 */
public record Violation(String scope, String window, String calendar, int max, int count) {

    /** A rolling limit's violation. */
    public Violation(String scope, String window, int max, int count) {
        this(scope, window, null, max, count);
    }

    public static Violation of(String scope, Limit l, int count) {
        return new Violation(scope, l.window(), l.calendar(), l.max(), count);
    }
}
