package io.freqcap.schema;

/** Named instants and spans the tests of every module share (epoch milliseconds, UTC). */
public final class Instants {
    private Instants() {}

    public static final long SECOND = 1_000L;
    public static final long MINUTE = 60 * SECOND;
    public static final long HOUR = 60 * MINUTE;
    public static final long DAY = 24 * HOUR;

    /** 2025-11-22T00:00Z: the first day of most tests. */
    public static final long DAY_1_MIDNIGHT = 1_763_769_600_000L;

    /** 2025-11-22T12:00Z. */
    public static final long DAY_1_NOON = DAY_1_MIDNIGHT + 12 * HOUR;
}
