package io.freqcap.schema.decision;

import io.freqcap.schema.config.Limit;

/**
 * Why a message was not let through (contract.md §5): one of a small set of kinds, each with only
 * its own fields. Audit records and HeldNotices write them ({@link AuditRecords}).
 */
public sealed interface Violation
        permits Violation.Exceeded,
                Violation.Lifetime,
                Violation.Quiet,
                Violation.HoldFull,
                Violation.OptedOut,
                Violation.Paused {

    String QUIET_HOURS = "quiet-hours";

    /** The scope of {@code maxHeld} (contract.md §3). */
    String HOLD = "hold";

    /** The prefix of the scopes of a user's preferences (contract.md §10). */
    String PREFERENCE = "preference:";

    String OPT_OUT = PREFERENCE + "opt-out";
    String PAUSED = PREFERENCE + "paused";

    /**
     * {@code all}, {@code channel:<name>}, {@code category:<name>}, {@code campaign:<campaignId>},
     * {@code campaigns}, their {@code preference:} forms, {@code quiet-hours}, {@code hold}, {@code
     * preference:opt-out} or {@code preference:paused}.
     */
    String scope();

    /** Whether a preference of the user's (contract.md §10) rather than a rule breaks. */
    default boolean isPreference() {
        return scope().startsWith(PREFERENCE);
    }

    default boolean isQuietHours() {
        return this instanceof Quiet;
    }

    /**
     * A limit the message would break.
     *
     * @param window a rolling limit's window; null for a calendar limit
     * @param calendar a calendar limit's period; null for a rolling limit
     * @param max the limit's max as the config states it (places it keeps included)
     * @param count for a rolling limit the most counted messages in scope that any interval of the
     *     window containing the message's timestamp already holds; for a calendar limit the counted
     *     messages in scope in the message's period
     * @param reserved the places the limit keeps for messages of a higher priority than this one's
     *     (contract.md §3 {@code reserve}): the message could use only {@code max - reserved}; 0
     *     when none are kept from it
     * @param lowered a limit {@code fatigue} lowered (contract.md §5): the user's unengaged count
     *     and the max in the config ({@code max} is the lowered one); else null
     */
    record Exceeded(
            String scope,
            String window,
            String calendar,
            int max,
            int count,
            int reserved,
            Limit.Lowered lowered)
            implements Violation {}

    /**
     * A lifetime limit the message would break (contract.md §3): REJECTED, never held.
     *
     * @param max the limit's max as the config states it (places it keeps included)
     * @param count the user's count of the campaign, without the message
     * @param reserved the places the limit keeps for messages of a higher priority than this one's;
     *     0 when none are kept from it
     */
    record Lifetime(String scope, int max, int count, int reserved) implements Violation {}

    /** Quiet hours from {@code from} to {@code to} ({@code HH:MM}, local times). */
    record Quiet(String from, String to) implements Violation {
        @Override
        public String scope() {
            return QUIET_HOURS;
        }
    }

    /** A user's held messages at {@code maxHeld} ({@code max}): no more may wait. */
    record HoldFull(int max, int waiting) implements Violation {
        @Override
        public String scope() {
            return HOLD;
        }
    }

    /** The user opted out of the message's channel or of its category (the other is null). */
    record OptedOut(String channel, String category) implements Violation {
        @Override
        public String scope() {
            return OPT_OUT;
        }
    }

    /** The user paused messages until {@code until} (epoch ms). */
    record Paused(long until) implements Violation {
        @Override
        public String scope() {
            return PAUSED;
        }
    }

    /** A limit's violation; one that keeps places from the message says how many. */
    static Violation of(String scope, Limit l, int count) {
        if (l.lifetime()) {
            return new Lifetime(scope, l.max() + l.reserved(), count, l.reserved());
        }
        return new Exceeded(
                scope,
                l.window(),
                l.calendar(),
                l.max() + l.reserved(),
                count,
                l.reserved(),
                l.lowered());
    }

    static Violation quietHours(String from, String to) {
        return new Quiet(from, to);
    }

    static Violation hold(int maxHeld, int waiting) {
        return new HoldFull(maxHeld, waiting);
    }

    static Violation optedOutOfChannel(String channel) {
        return new OptedOut(channel, null);
    }

    static Violation optedOutOfCategory(String category) {
        return new OptedOut(null, category);
    }

    static Violation paused(long until) {
        return new Paused(until);
    }
}
