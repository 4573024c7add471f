package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.preference.UserPreferences;

/**
 * What a message is judged under besides its user's history ({@link CappingRule#judge}).
 *
 * @param segment the segment whose rule applies ({@code *} when none does)
 * @param shadowSegment the segment whose shadow rule applies ({@code *} when none does)
 * @param times the job's clocks
 * @param user the user's own side
 */
public record Judging(
        LimitConfig config, String segment, String shadowSegment, Times times, User user) {

    /**
     * The job's clocks for one decision.
     *
     * @param sweptHorizon the job cleared histories whose counted messages could still share a
     *     window with a message older than this; such a message is STALE, whatever the user's
     *     history says, since the history the job holds may be missing what it needs ({@link
     *     Long#MIN_VALUE}: nothing cleared)
     * @param now the job's wall clock (a backtest's: the latest timestamp decided): held messages
     *     with a later send time are waiting, and count towards {@code maxHeld}
     */
    public record Times(long sweptHorizon, long now) {
        /** Nothing swept, no held message waiting. */
        public static final Times NONE = new Times(Long.MIN_VALUE, Long.MIN_VALUE);
    }

    /**
     * The user's own side.
     *
     * @param prefs the user's preferences (contract.md §10), or null for none
     * @param lastEngagement the timestamp of the user's last engagement (contract.md §11), which a
     *     rule's {@code fatigue} reads; {@link Long#MIN_VALUE} for none yet
     * @param lifetime the user's lifetime count of the message's campaign as the message reads it
     *     (contract.md §3), which a rule's lifetime limits read; 0 where none is read
     */
    public record User(UserPreferences prefs, long lastEngagement, long lifetime) {
        /** A user without preferences who has not engaged yet, with nothing counted for life. */
        public static final User NONE = new User(null, Long.MIN_VALUE, 0);

        /** The same, with {@code n} of the campaign's counted messages given up (preemption). */
        User freeing(long n) {
            return n == 0 ? this : new User(prefs, lastEngagement, Math.max(0, lifetime - n));
        }
    }

    /**
     * The same message with {@code n} of its campaign's counted messages given up: preemption frees
     * lifetime places too (contract.md §3).
     */
    public Judging freeing(long n) {
        return n == 0 ? this : new Judging(config, segment, shadowSegment, times, user.freeing(n));
    }

    /** A message of a user without preferences, nothing swept, no held message waiting. */
    public static Judging of(LimitConfig config, String segment) {
        return new Judging(config, segment, segment, Times.NONE, User.NONE);
    }

    public long sweptHorizon() {
        return times.sweptHorizon();
    }

    public long now() {
        return times.now();
    }

    public UserPreferences prefs() {
        return user.prefs();
    }

    public long lastEngagement() {
        return user.lastEngagement();
    }
}
