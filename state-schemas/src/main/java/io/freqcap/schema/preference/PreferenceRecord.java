package io.freqcap.schema.preference;

import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import java.nio.charset.StandardCharsets;

/**
 * A record of the preferences topic (contract.md §10): a user's preferences, or a tombstone (a key,
 * no value) that clears them.
 */
public sealed interface PreferenceRecord {
    long userId();

    /** The user's preferences from now on. */
    record Update(UserPreferences preferences) implements PreferenceRecord {
        @Override
        public long userId() {
            return preferences.userId();
        }
    }

    /** The user's preferences and their version removed. */
    record Clear(long userId) implements PreferenceRecord {}

    /**
     * Reads a record of the topic.
     *
     * @throws MalformedRecordException for a key that is not a userId's decimal text, a tombstone
     *     without a key, or a value {@link UserPreferences#parse} refuses
     */
    static PreferenceRecord read(byte[] key, byte[] value) throws MalformedRecordException {
        Long keyUserId = key == null ? null : userIdOf(key);
        if (value == null) {
            if (keyUserId == null) {
                throw new MalformedRecordException("a tombstone without a key names no user");
            }
            return new Clear(keyUserId);
        }
        return new Update(UserPreferences.parse(value, keyUserId));
    }

    /**
     * A record of the topic on its way to the capping operator, keyed by the user it names (the
     * record's key, or the value's {@code userId} for a record without one); an unreadable one
     * carries its error.
     */
    static InboundMessage inbound(RawRecord raw) {
        try {
            return InboundMessage.other(
                    raw,
                    read(raw.key(), raw.value()).userId(),
                    null,
                    InboundMessage.Kind.PREFERENCE);
        } catch (MalformedRecordException e) {
            return InboundMessage.other(raw, -1, e.getMessage(), InboundMessage.Kind.PREFERENCE);
        }
    }

    private static long userIdOf(byte[] key) throws MalformedRecordException {
        String text = new String(key, StandardCharsets.UTF_8);
        if (text.isEmpty() || text.length() > 19 || !text.chars().allMatch(Character::isDigit)) {
            throw new MalformedRecordException(
                    "key: expected a userId as decimal text, got "
                            + (text.length() > 40 ? text.substring(0, 40) + "..." : text));
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new MalformedRecordException("key: userId out of range 0..2^63-1");
        }
    }
}
