package io.freqcap.schema.lifetime;

import io.freqcap.schema.message.FutureBound;

/**
 * A user's lifetime count of one campaign (contract.md §3): how many of the user's messages of the
 * campaign are counted, and the latest send time among those ever counted (one that stops being
 * counted does not move it back). A count whose latest send time lies the retention ({@code
 * --lifetime-retention}) or more before a message's timestamp reads as 0 for that message, and
 * starts afresh from it if it is counted. Immutable.
 *
 * @param count how many counted messages of the campaign, never below 0
 * @param latest the latest send time of one counted, epoch ms
 */
public record LifetimeCount(long count, long latest) {
    /** {@code --lifetime-retention}'s default: 730 days. */
    public static final long DEFAULT_RETENTION_MILLIS = 730L * 86_400_000L;

    /** {@code --lifetime-retention}'s bounds: 1 to 3,650 days (contract.md §8). */
    public static final long MIN_RETENTION_MILLIS = 86_400_000L;

    public static final long MAX_RETENTION_MILLIS = 3_650L * 86_400_000L;

    /**
     * Reads {@code --lifetime-retention}: a window's syntax (contract.md §3), from {@code 1d} to
     * {@code 3650d}.
     *
     * @throws IllegalArgumentException saying what is wrong
     */
    public static long parseRetention(String text) {
        long millis = FutureBound.durationMillis(text.trim());
        if (millis < 0) {
            throw new IllegalArgumentException(
                    "expected a positive integer followed by s, m, h, d or w, got \""
                            + text
                            + "\"");
        }
        if (millis < MIN_RETENTION_MILLIS || millis > MAX_RETENTION_MILLIS) {
            throw new IllegalArgumentException("must be 1d..3650d, got \"" + text + "\"");
        }
        return millis;
    }

    /** What a message stamped {@code t} reads. */
    public long at(long t, long retentionMillis) {
        return expiredAt(t, retentionMillis) ? 0 : count;
    }

    /**
     * The count with a message stamped {@code t} counted at {@code sendAt}; {@code previous} null
     * for none yet.
     */
    public static LifetimeCount counted(
            LifetimeCount previous, long t, long sendAt, long retentionMillis) {
        if (previous == null || previous.expiredAt(t, retentionMillis)) {
            return new LifetimeCount(1, sendAt);
        }
        return new LifetimeCount(previous.count + 1, Math.max(previous.latest, sendAt));
    }

    /** The count with one message less, never below 0; its latest send time stays. */
    public LifetimeCount uncounted() {
        return new LifetimeCount(Math.max(0, count - 1), latest);
    }

    /** Whether a message stamped {@code t} finds it past the retention. */
    public boolean expiredAt(long t, long retentionMillis) {
        // Both are epoch ms of the years 0..9999 (contract.md §2): no overflow.
        return t - latest >= retentionMillis;
    }
}
