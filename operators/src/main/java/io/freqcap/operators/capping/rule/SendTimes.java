package io.freqcap.operators.capping.rule;

import java.util.function.LongPredicate;

/**
 * The earliest instant at or after a message's timestamp outside quiet hours at which it passes
 * every limit (contract.md §6): its send time, or its {@code retryAfter}. Plain Java.
 *
 * <p>The instants at which the limits pass form intervals that start at the candidates the limits
 * give (t, an entry plus its window, a period start); the instants outside quiet hours form
 * intervals that start where quiet time ends. So the earliest instant in both is t, a candidate
 * that is not quiet, or the end of quiet time after a candidate: trying those in order finds it.
 */
final class SendTimes {
    private SendTimes() {}

    /**
     * @param candidates ascending in {@code [0, n)}: every instant after t at which the limits may
     *     start to pass
     * @param passes whether the limits pass at an instant at or after t, asked in ascending order
     * @param quiet the quiet hours, or null for none
     * @return null when no instant passes (a limit of 0, a pause for good)
     */
    static Long earliest(long t, long[] candidates, int n, LongPredicate passes, QuietTimes quiet) {
        int next = 0;
        long at = t;
        while (true) {
            at = quiet == null ? at : quiet.nextOpen(at);
            if (at == QuietTimes.NEVER) {
                return null;
            }
            if (passes.test(at)) {
                return at;
            }
            while (next < n && candidates[next] <= at) {
                next++;
            }
            if (next == n) {
                return null; // past every candidate the limits no longer change
            }
            at = candidates[next];
        }
    }
}
