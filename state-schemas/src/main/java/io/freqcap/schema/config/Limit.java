package io.freqcap.schema.config;

import io.freqcap.schema.common.MalformedRecordException;
import java.math.BigInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One limit (contract.md §3): rolling, at most {@code max} counted messages in any interval of
 * length {@code windowMillis}; or calendar, at most {@code max} in any calendar day, ISO week or
 * month of the user's zone; or, in a rule's {@code campaign} list only, lifetime: at most {@code
 * max} counted messages of the message's campaign, ever (as long as the user's count of it is
 * kept).
 *
 * @param window the window as written in the config ({@code 1d}), echoed in audit records; null for
 *     a calendar limit
 * @param windowMillis the window; for a calendar limit what it counts as for STALE and how far back
 *     histories reach (3d, 9d, 33d: any two zones' days, weeks, months)
 * @param calendar {@code day}, {@code week} or {@code month}; null for a rolling limit
 * @param reserve the last places kept for messages of a priority at least the reserve's; null for
 *     none
 * @param reserved in a limit as one message reads it ({@link #forPriority}): the places kept from
 *     that message, which {@code max} already leaves out; 0 in a config's own limits
 * @param lowered in a limit as one user's message reads it: what {@code fatigue} lowered it from;
 *     null when it is the config's own max
 * @param lifetime whether it is a lifetime limit: then window and calendar are null and {@code
 *     windowMillis} 0 (it adds nothing to the longest window)
 */
public record Limit(
        String window,
        long windowMillis,
        int max,
        String calendar,
        Reserve reserve,
        int reserved,
        Lowered lowered,
        boolean lifetime)
        implements java.io.Serializable {

    /**
     * What lowered a limit (contract.md §3 {@code fatigue}): the user's unengaged count and the max
     * in the config, which a violation reports beside the lowered max.
     */
    public record Lowered(long unengaged, int configured) implements java.io.Serializable {}

    /**
     * The limit with its max lowered to {@code max} by {@code unengaged} unengaged messages; its
     * reserve keeps min(slots, max) places (contract.md §3).
     */
    public Limit lowered(int max, long unengaged) {
        return new Limit(
                window,
                windowMillis,
                max,
                calendar,
                reserve == null
                        ? null
                        : new Reserve(Math.min(reserve.slots(), max), reserve.priority()),
                0,
                new Lowered(unengaged, this.max),
                lifetime);
    }

    /**
     * {@code slots} places (1..max) of every interval or period kept for messages of at least this
     * {@code priority} (1..100): "three a day, the third only for important messages".
     */
    public record Reserve(int slots, int priority) implements java.io.Serializable {}

    /** A rolling limit. */
    public static Limit rolling(String window, long windowMillis, int max) {
        return new Limit(window, windowMillis, max, null, null, 0, null, false);
    }

    /** A lifetime limit: at most {@code max} counted messages of the campaign, ever. */
    public static Limit lifetime(int max) {
        return new Limit(null, 0, max, null, null, 0, null, true);
    }

    /** The same limit with places reserved. */
    public Limit reserving(Reserve r) {
        return new Limit(window, windowMillis, max, calendar, r, 0, null, lifetime);
    }

    /**
     * The limit as a message of this priority reads it: with its reserve kept from it when the
     * priority does not reach it (contract.md §6, "Reserved places"), else this limit.
     */
    public Limit forPriority(int priority) {
        if (reserve == null || priority >= reserve.priority()) {
            return this;
        }
        return new Limit(
                window,
                windowMillis,
                max - reserve.slots(),
                calendar,
                null,
                reserve.slots(),
                lowered,
                lifetime);
    }

    /** A calendar limit of {@code period} (day, week or month). */
    public static Limit calendar(String period, int max) throws MalformedRecordException {
        long days =
                switch (period) {
                    case "day" -> 3;
                    case "week" -> 9;
                    case "month" -> 33;
                    default ->
                            throw new MalformedRecordException(
                                    "calendar: expected day, week or month, got \""
                                            + period
                                            + "\"");
                };
        return new Limit(null, days * 86_400_000L, max, period, null, 0, null, false);
    }

    public boolean isCalendar() {
        return calendar != null;
    }

    public static final long MAX_WINDOW_MILLIS = 90L * 24 * 3600 * 1000;
    public static final int MAX_MAX = 1_000_000;
    private static final Pattern WINDOW = Pattern.compile("([0-9]+)([smhdw])");

    /** Parses {@code 30s}, {@code 15m}, {@code 6h}, {@code 1d}, {@code 2w}; at most 90 days. */
    public static long parseWindow(String text) throws MalformedRecordException {
        Matcher m = WINDOW.matcher(text);
        if (!m.matches()) {
            throw new MalformedRecordException(
                    "window: expected a positive integer followed by s, m, h, d or w, got \""
                            + text
                            + "\"");
        }
        long unit;
        switch (m.group(2)) {
            case "s":
                unit = 1000L;
                break;
            case "m":
                unit = 60_000L;
                break;
            case "h":
                unit = 3_600_000L;
                break;
            case "d":
                unit = 86_400_000L;
                break;
            default:
                unit = 7 * 86_400_000L;
        }
        BigInteger millis = new BigInteger(m.group(1)).multiply(BigInteger.valueOf(unit));
        if (millis.signum() == 0) {
            throw new MalformedRecordException("window: must be positive, got \"" + text + "\"");
        }
        if (millis.compareTo(BigInteger.valueOf(MAX_WINDOW_MILLIS)) > 0) {
            throw new MalformedRecordException("window: at most 90d, got \"" + text + "\"");
        }
        return millis.longValueExact();
    }
}
