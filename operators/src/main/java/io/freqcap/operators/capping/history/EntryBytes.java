package io.freqcap.operators.capping.history;

import io.freqcap.schema.message.OutboundMessage;

/**
 * The heap a {@link LongHistory}'s entry takes, estimated from above: its slots in the long
 * history's arrays, {@link TimestampColumn}s and {@link FingerprintCounts}, and the strings it
 * brings. Input decides the strings (a heavy user with a new 128-character campaign per message),
 * so the budget of live long histories is kept in these bytes, not in entries.
 */
public final class EntryBytes {
    private EntryBytes() {}

    /** An entry without strings of its own: 3 longs, 4 ints and 3 references, 3 column slots. */
    public static final long PER_ENTRY = 96;

    /** A scope key and its {@link TimestampColumn} in a long history's columns. */
    private static final long SCOPE_BYTES = 160;

    /** The estimate for an entry with these strings (each may be null). */
    static long of(String messageId, String category, String campaign) {
        long b = PER_ENTRY;
        if (messageId != null) {
            b += stringBytes(messageId);
        }
        if (category != null && !OutboundMessage.DEFAULT_CATEGORY.equals(category)) {
            b += stringBytes(category);
        }
        if (campaign != null) {
            b += stringBytes(campaign) + SCOPE_BYTES; // its own scope and column, at worst
        }
        return b;
    }

    private static long stringBytes(String s) {
        return 48 + 2L * s.length();
    }
}
