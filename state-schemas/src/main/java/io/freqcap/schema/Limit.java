package io.freqcap.schema;

import java.math.BigInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One limit: at most {@code max} counted messages in any interval of length {@code windowMillis}.
 *
 * @param window the window as written in the config ({@code 1d}), echoed in audit records
 */
public record Limit(String window, long windowMillis, int max) implements java.io.Serializable {
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
