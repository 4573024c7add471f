package io.freqcap.schema.config;

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
}
