package io.freqcap.operators.capping.rule;

import io.freqcap.operators.capping.rule.Periods.ZoneClock;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.preference.UserPreferences;

/**
 * One message as every check of the rule reads it, built once per message ({@link
 * CappingRule#judge}) and shared by the segment's rule and the shadow rule: what one counts, the
 * other reads.
 *
 * @param history the user's counted history
 * @param calendar the history's counts by period in the message's zone
 * @param user the user's own side: preferences and last engagement
 */
record Subject(
        CountedHistory history,
        OutboundMessage message,
        CalendarCounts calendar,
        Judging.User user) {

    /** The message's timestamp. */
    long t() {
        return message.timestamp();
    }

    ZoneClock zone() {
        return calendar.zone();
    }

    /** The user's preferences, or null for none. */
    UserPreferences prefs() {
        return user.prefs();
    }
}
