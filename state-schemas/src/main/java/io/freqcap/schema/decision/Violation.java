package io.freqcap.schema.decision;

import io.freqcap.schema.config.Limit;

/**
 * A limit a message would break, or the quiet hours it falls in.
 *
 * @param scope {@code all}, {@code channel:<name>}, {@code category:<name>}, {@code
 *     campaign:<campaignId>} or {@code quiet-hours}
 * @param window a rolling limit's window; null for a calendar limit
 * @param calendar a calendar limit's period; null for a rolling limit
 * @param count for a rolling limit the most counted messages in scope that any interval of the
 *     window containing the message's timestamp already holds; for a calendar limit the counted
 *     messages in scope in the message's period
 * @param reserved the places the limit keeps for messages of a higher priority than this one's
 *     (contract.md §3 {@code reserve}): the message could use only {@code max - reserved}; 0 when
 *     none are kept from it
 * @param channel a {@code preference:opt-out} violation's channel (contract.md §10), else null
 * @param category a {@code preference:opt-out} violation's category, else null
 * @param until a {@code preference:paused} violation's end of the pause (epoch ms), else null
 * @param lowered a limit {@code fatigue} lowered (contract.md §5): the user's unengaged count and
 *     the max in the config ({@code max} is the lowered one); else null
 */
public record Violation(
        String scope,
        String window,
        String calendar,
        int max,
        int count,
        String from,
        String to,
        int reserved,
        String channel,
        String category,
        Long until,
        Limit.Lowered lowered) {

    /** Any violation but a lowered limit's. */
    public Violation(
            String scope,
            String window,
            String calendar,
            int max,
            int count,
            String from,
            String to,
            int reserved,
            String channel,
            String category,
            Long until) {
        this(
                scope, window, calendar, max, count, from, to, reserved, channel, category, until,
                null);
    }

    public static final String QUIET_HOURS = "quiet-hours";

    /** The scope of {@code maxHeld} (contract.md §3). */
    public static final String HOLD = "hold";

    /** The prefix of the scopes of a user's preferences (contract.md §10). */
    public static final String PREFERENCE = "preference:";

    public static final String OPT_OUT = PREFERENCE + "opt-out";
    public static final String PAUSED = PREFERENCE + "paused";

    /** A limit's violation: a rolling one (window) or a calendar one (calendar). */
    public Violation(String scope, String window, String calendar, int max, int count) {
        this(scope, window, calendar, max, count, null, null, 0);
    }

    /** A limit's violation that may keep places from the message. */
    public Violation(
            String scope,
            String window,
            String calendar,
            int max,
            int count,
            String from,
            String to,
            int reserved) {
        this(scope, window, calendar, max, count, from, to, reserved, null, null, null);
    }

    /** The user opted out of the message's channel. */
    public static Violation optedOutOfChannel(String channel) {
        return new Violation(OPT_OUT, null, null, 0, 0, null, null, 0, channel, null, null);
    }

    /** The user opted out of the message's category. */
    public static Violation optedOutOfCategory(String category) {
        return new Violation(OPT_OUT, null, null, 0, 0, null, null, 0, null, category, null);
    }

    /** The user paused messages until {@code until}. */
    public static Violation paused(long until) {
        return new Violation(PAUSED, null, null, 0, 0, null, null, 0, null, null, until);
    }

    /** Whether a preference of the user's (contract.md §10) rather than a rule breaks. */
    public boolean isPreference() {
        return scope.startsWith(PREFERENCE);
    }

    /** Whether this is an opt-out or a pause, which have no max and count. */
    public boolean isChoice() {
        return channel != null || category != null || until != null;
    }

    /** A rolling limit's violation. */
    public Violation(String scope, String window, int max, int count) {
        this(scope, window, null, max, count);
    }

    /** Quiet hours from {@code from} to {@code to} ({@code HH:MM}, local times). */
    public static Violation quietHours(String from, String to) {
        return new Violation(QUIET_HOURS, null, null, 0, 0, from, to, 0);
    }

    /** A user's held messages at {@code maxHeld}: no more may wait. */
    public static Violation hold(int maxHeld, int waiting) {
        return new Violation(HOLD, null, null, maxHeld, waiting);
    }

    public boolean isQuietHours() {
        return from != null;
    }

    /** A limit's violation; one that keeps places from the message says how many. */
    public static Violation of(String scope, Limit l, int count) {
        return new Violation(
                scope,
                l.window(),
                l.calendar(),
                l.max() + l.reserved(),
                count,
                null,
                null,
                l.reserved(),
                null,
                null,
                null,
                l.lowered());
    }
}
