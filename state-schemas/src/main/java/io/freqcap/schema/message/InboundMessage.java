package io.freqcap.schema.message;

import io.freqcap.schema.common.ArrayRecords;
import io.freqcap.schema.common.MalformedRecordException;
import org.apache.flink.api.common.typeinfo.TypeInfo;

/**
 * An input record on its way to the capping operator: either parsed ({@link #message} set) or
 * malformed ({@link #error} set). Malformed records travel through the capping operator too, so
 * that its {@code malformed} counter sees them (contract.md §9); they are keyed by {@link
 * #routingKey}, a negative number that no userId can take.
 *
 * <p>Records of the preferences and receipts topics (contract.md §10, §11) travel the same way,
 * keyed by their user, so that they reach the task that holds the user's state: {@link #kind} says
 * which topic a record came from. Only a message's fields are taken apart here; the capping
 * operator reads the others' values again (they are a small share of the traffic), an unreadable
 * one being INVALID_CONTROL rather than MALFORMED.
 */
@TypeInfo(InboundMessageSerializer.Factory.class)
public record InboundMessage(
        long routingKey,
        String messageId,
        String channel,
        String category,
        long timestamp,
        String timezone,
        String campaignId,
        int priority,
        String error,
        byte[] key,
        byte[] value,
        String topic,
        int partition,
        long offset,
        Kind kind) {

    /** The topic a record came from. */
    public enum Kind {
        MESSAGE,
        PREFERENCE,
        RECEIPT
    }

    @Override
    public boolean equals(Object o) {
        return ArrayRecords.equal(this, o);
    }

    @Override
    public String toString() {
        String what = error != null ? "malformed: " + error : messageId + " of user " + routingKey;
        return String.format("InboundMessage[%s, %s-%d@%d]", what, topic, partition, offset);
    }

    public boolean isMalformed() {
        return error != null;
    }

    /**
     * This record as a MALFORMED one with {@code error}, under the same key: a message the job
     * could not decide, audited instead of failing the task.
     */
    public InboundMessage undecided(String error) {
        return new InboundMessage(
                routingKey,
                messageId,
                channel,
                category,
                timestamp,
                timezone,
                campaignId,
                priority,
                error,
                key,
                value,
                topic,
                partition,
                offset,
                kind);
    }

    /** Whether this is a message, not a record of the preferences or receipts topic. */
    public boolean isMessage() {
        return kind == Kind.MESSAGE;
    }

    /**
     * A record whose value is not taken apart here: of the preferences or receipts topic, keyed by
     * {@code routingKey} (its user), or unreadable ({@code error} set; then under a negative key).
     */
    public static InboundMessage other(RawRecord raw, long routingKey, String error, Kind kind) {
        if (error != null) {
            // Spread unreadable records over 1024 negative keys: they hold no state.
            routingKey = -1 - (raw.offset() & 1023);
        }
        return new InboundMessage(
                routingKey,
                null,
                null,
                null,
                -1,
                null,
                null,
                0,
                error,
                raw.key(),
                raw.value(),
                raw.topic(),
                raw.partition(),
                raw.offset(),
                kind);
    }

    /** The parsed fields; only for a record that is not malformed. */
    public OutboundMessage message() {
        return new OutboundMessage(
                messageId,
                routingKey,
                channel,
                category,
                timestamp,
                timezone,
                campaignId,
                priority);
    }

    /** Parses a record whatever its size and timestamp (tests and tools). */
    public static InboundMessage of(RawRecord raw) {
        return of(raw, Integer.MAX_VALUE);
    }

    /** Parses a record whatever its timestamp. */
    public static InboundMessage of(RawRecord raw, int maxRecordBytes) {
        return of(raw, maxRecordBytes, FutureBound.OFF, 0);
    }

    /**
     * Parses a record; one whose key and value together exceed {@code maxRecordBytes} is malformed
     * ("record too large"), since its delivery could not carry it byte for byte (a record without a
     * key: its value and the userId text its delivery is keyed by), and so is one stamped later
     * than {@code now} plus {@code maxFuture}.
     */
    public static InboundMessage of(
            RawRecord raw, int maxRecordBytes, FutureBound maxFuture, long now) {
        try {
            long size =
                    (long) (raw.value() == null ? 0 : raw.value().length)
                            + (raw.key() == null ? 0 : raw.key().length);
            if (size > maxRecordBytes) {
                throw new MalformedRecordException(tooLargeError(size, maxRecordBytes));
            }
            OutboundMessage m = OutboundMessage.parse(raw.value());
            if (raw.key() == null) {
                // Its delivery is keyed by the userId text (contract.md §1): that counts too.
                long delivered = size + Long.toString(m.userId()).length();
                if (delivered > maxRecordBytes) {
                    throw new MalformedRecordException(tooLargeError(delivered, maxRecordBytes));
                }
            }
            maxFuture.check(m.timestamp(), now);
            if (m.timestamp() >= OutboundMessage.LAST_YEAR_END) {
                // No calendar, zone or window arithmetic reaches past the year 9999: a timestamp
                // there is a unit mistake, under --max-future off too.
                throw new MalformedRecordException(
                        "timestamp: after the year 9999, got " + m.timestamp());
            }
            return new InboundMessage(
                    m.userId(),
                    m.messageId(),
                    m.channel(),
                    m.category(),
                    m.timestamp(),
                    m.timezone(),
                    m.campaignId(),
                    m.priority(),
                    null,
                    raw.key(),
                    raw.value(),
                    raw.topic(),
                    raw.partition(),
                    raw.offset(),
                    Kind.MESSAGE);
        } catch (MalformedRecordException e) {
            return malformed(raw, e.getMessage());
        }
    }

    /**
     * The MALFORMED record of an input of which only the first bytes were read ({@code raw}): it is
     * {@code fullLength} bytes long, over the bound.
     */
    public static InboundMessage tooLarge(RawRecord raw, long fullLength, int maxRecordBytes) {
        return malformed(raw, tooLargeError(fullLength, maxRecordBytes));
    }

    private static String tooLargeError(long size, int maxRecordBytes) {
        return "record too large: " + size + " bytes, over --max-record-bytes " + maxRecordBytes;
    }

    private static InboundMessage malformed(RawRecord raw, String error) {
        return other(raw, -1, error, Kind.MESSAGE);
    }

    @Override
    public int hashCode() {
        return ArrayRecords.hash(this);
    }
}
