package io.freqcap.schema.message;

import io.freqcap.schema.common.MalformedRecordException;
import java.io.Serializable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How far after the job's wall clock a message's timestamp may lie ({@code --max-future},
 * contract.md §2): one record stamped in microseconds, or years ahead, would otherwise be counted
 * and make every later message of its user STALE.
 *
 * @param millis the bound; {@link Long#MAX_VALUE} for none
 * @param text the bound as given ({@code 1d}), quoted in the MALFORMED record's error
 */
public record FutureBound(long millis, String text) implements Serializable {
    /** {@code --max-future off}: any timestamp. */
    public static final FutureBound OFF = new FutureBound(Long.MAX_VALUE, "off");

    /** The default, {@code 1d}. */
    public static final FutureBound ONE_DAY = new FutureBound(86_400_000L, "1d");

    private static final Pattern DURATION = Pattern.compile("([0-9]{1,9})([smhdw])");

    /**
     * Reads {@code off} or a duration in the window syntax ({@code 30m}, {@code 1d}, {@code 2w}).
     *
     * @throws IllegalArgumentException saying what is wrong
     */
    public static FutureBound parse(String text) {
        String t = text.trim();
        if (t.equals("off")) {
            return OFF;
        }
        long millis = durationMillis(t);
        if (millis < 0) {
            throw new IllegalArgumentException(
                    "expected off or a positive integer followed by s, m, h, d or w, got \""
                            + text
                            + "\"");
        }
        return new FutureBound(millis, t);
    }

    /**
     * A duration in the window syntax ({@code 30m}, {@code 1d}, {@code 2w}; at most nine digits, so
     * no product overflows) in milliseconds; -1 when {@code t} is not one, or is zero.
     */
    public static long durationMillis(String t) {
        Matcher m = DURATION.matcher(t);
        if (!m.matches() || Long.parseLong(m.group(1)) == 0) {
            return -1;
        }
        long unit =
                switch (m.group(2)) {
                    case "s" -> 1000L;
                    case "m" -> 60_000L;
                    case "h" -> 3_600_000L;
                    case "d" -> 86_400_000L;
                    default -> 7 * 86_400_000L;
                };
        return Long.parseLong(m.group(1)) * unit;
    }

    /**
     * The latest timestamp the bound accepts at wall clock {@code now}: {@code now} plus the bound,
     * and never the year 10000 or later (contract.md §8), under {@code off} too.
     */
    public long latest(long now) {
        long bound =
                millis == Long.MAX_VALUE || now > Long.MAX_VALUE - millis
                        ? Long.MAX_VALUE
                        : now + millis;
        return Math.min(bound, OutboundMessage.LAST_YEAR_END - 1);
    }

    /**
     * @throws MalformedRecordException when {@code timestamp} lies more than the bound after {@code
     *     now}
     */
    public void check(long timestamp, long now) throws MalformedRecordException {
        if (millis != Long.MAX_VALUE && timestamp - now > millis) {
            throw new MalformedRecordException(
                    "timestamp " + timestamp + " is more than " + text + " after the job's clock");
        }
    }
}
