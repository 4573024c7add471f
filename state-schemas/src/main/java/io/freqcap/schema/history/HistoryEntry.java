package io.freqcap.schema.history;

import io.freqcap.schema.message.OutboundMessage;

/**
 * One counted message as a history keeps it (contract.md §6).
 *
 * @param timestamp when it counts: its send time
 * @param fingerprint its messageId's fingerprint ({@link Fingerprints}); only 56 bits are kept
 * @param messageId the id to keep with the entry, or {@code null} to keep none
 * @param category its category ({@link OutboundMessage#DEFAULT_CATEGORY} when it had none)
 * @param campaign its campaignId, or {@code null} for none
 * @param offsetSeconds its zone's offset from UTC at its timestamp
 * @param heldFor its send time minus the timestamp it was stamped with (0: not held)
 */
public record HistoryEntry(
        long timestamp,
        long fingerprint,
        String channel,
        String messageId,
        String category,
        String campaign,
        int offsetSeconds,
        long heldFor) {

    /** An entry of the default category, no campaign, in UTC, not held. */
    public static HistoryEntry plain(
            long timestamp, long fingerprint, String channel, String messageId) {
        return new HistoryEntry(
                timestamp,
                fingerprint,
                channel,
                messageId,
                OutboundMessage.DEFAULT_CATEGORY,
                null,
                0,
                0);
    }

    /** The timestamp it was stamped with. */
    public long stamped() {
        return timestamp - heldFor;
    }
}
