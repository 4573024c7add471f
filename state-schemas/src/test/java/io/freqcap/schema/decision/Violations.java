package io.freqcap.schema.decision;

/** Violations as tests write them: a limit's, by its window or its calendar period. */
public final class Violations {
    private Violations() {}

    /** A rolling limit of {@code window} and {@code max}, broken at {@code count}. */
    public static Violation rolling(String scope, String window, int max, int count) {
        return new Violation.Exceeded(scope, window, null, max, count, 0, null);
    }

    /** A calendar limit of {@code period} ({@code day}, {@code week}, {@code month}). */
    public static Violation calendar(String scope, String period, int max, int count) {
        return new Violation.Exceeded(scope, null, period, max, count, 0, null);
    }

    /** A rolling limit keeping {@code reserved} of its {@code max} places from the message. */
    public static Violation reserved(
            String scope, String window, int max, int count, int reserved) {
        return new Violation.Exceeded(scope, window, null, max, count, reserved, null);
    }
}
