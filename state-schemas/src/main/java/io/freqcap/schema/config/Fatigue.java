package io.freqcap.schema.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.common.MalformedRecordException;
import java.math.BigDecimal;

/**
 * A rule's {@code fatigue} (contract.md §3): its limits lowered for a user who has stopped
 * engaging. With u the user's unengaged count and k = ⌊u / after⌋, every limit of the rule applies
 * with the max m_k: m_0 = max, m_(i+1) = ⌊m_i × scale⌋ in integers, never below min(floor, max).
 *
 * @param after how many unengaged messages make one step (1..1,000)
 * @param scaleHundredths the scale in hundredths (1..99): integers only, so the job and a replay
 *     agree to the message
 * @param floor no step lowers a limit below min(floor, max) (0..1,000,000)
 * @param window how far back unengaged messages count, as written ({@code 30d})
 * @param windowMillis {@code window}, at most 90 days
 */
public record Fatigue(int after, int scaleHundredths, int floor, String window, long windowMillis)
        implements java.io.Serializable {

    public static final int MAX_AFTER = 1_000;

    /**
     * The max of a limit of {@code max} for a user with {@code unengaged} unengaged messages: the
     * config's own when fewer than {@code after}.
     */
    public int lowered(int max, long unengaged) {
        long steps = unengaged / after;
        int bottom = Math.min(floor, max);
        int m = max;
        for (long i = 0; i < steps && m > bottom; i++) {
            // m ≤ 1,000,000 and the scale below 100: the product fits an int
            m = Math.max(bottom, m * scaleHundredths / 100);
        }
        return m;
    }

    /** Reads {@code {"after": 5, "scale": 0.5, "floor": 1, "window": "30d"}}, bounded. */
    static Fatigue parse(JsonNode node, String path) throws MalformedRecordException {
        if (!node.isObject()) {
            throw new MalformedRecordException(path + ": expected an object");
        }
        int after = RuleParser.boundedInt(node.get("after"), path + ".after", 1, MAX_AFTER);
        JsonNode s = node.get("scale");
        // 1e400 reads as an infinite double, which no BigDecimal holds
        BigDecimal scale =
                s != null
                                && s.isNumber()
                                && (!s.isFloatingPointNumber() || Double.isFinite(s.doubleValue()))
                        ? s.decimalValue()
                        : null;
        if (scale == null
                || scale.compareTo(new BigDecimal("0.01")) < 0
                || scale.compareTo(new BigDecimal("0.99")) > 0
                || scale.stripTrailingZeros().scale() > 2) {
            throw new MalformedRecordException(
                    path
                            + ".scale: expected a number 0.01..0.99 with at most two decimals, got "
                            + s);
        }
        int floor = RuleParser.boundedInt(node.get("floor"), path + ".floor", 0, Limit.MAX_MAX);
        JsonNode w = node.get("window");
        if (w == null || !w.isTextual()) {
            throw new MalformedRecordException(path + ".window: expected a string like \"30d\"");
        }
        long millis;
        try {
            millis = Limit.parseWindow(w.textValue());
        } catch (MalformedRecordException e) {
            throw new MalformedRecordException(path + "." + e.getMessage());
        }
        return new Fatigue(
                after, scale.movePointRight(2).intValueExact(), floor, w.textValue(), millis);
    }
}
