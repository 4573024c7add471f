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
 *
 * @param routingKey the userId, or a negative key for a malformed record
 * @param message the parsed fields; null for a record of another topic or one that could not be
 *     read
 * @param error why the record is malformed, or null
 * @param raw the record as it arrived, with its origin
 * @param kind the topic it came from
 */
@TypeInfo(InboundMessageSerializer.Factory.class)
public record InboundMessage(
        long routingKey, OutboundMessage message, String error, RawRecord raw, Kind kind) {

    /** The topic a record came from. */
    public enum Kind {
        MESSAGE,
        PREFERENCE,
        RECEIPT
    }

    /** A message parsed elsewhere (tests and benchmarks build messages so). */
    public static InboundMessage parsed(OutboundMessage m, RawRecord raw) {
        return new InboundMessage(m.userId(), m, null, raw, Kind.MESSAGE);
    }

    public String messageId() {
        return message == null ? null : message.messageId();
    }

    public String channel() {
        return message == null ? null : message.channel();
    }

    public String category() {
        return message == null ? null : message.category();
    }

    /** The message's timestamp; -1 without one. */
    public long timestamp() {
        return message == null ? -1 : message.timestamp();
    }

    public String timezone() {
        return message == null ? null : message.timezone();
    }

    public String campaignId() {
        return message == null ? null : message.campaignId();
    }

    public int priority() {
        return message == null ? 0 : message.priority();
    }

    public byte[] key() {
        return raw.key();
    }

    public byte[] value() {
        return raw.value();
    }

    public String topic() {
        return raw.topic();
    }

    public int partition() {
        return raw.partition();
    }

    public long offset() {
        return raw.offset();
    }

    @Override
    public boolean equals(Object o) {
        return ArrayRecords.equal(this, o);
    }

    @Override
    public String toString() {
        String what =
                error != null ? "malformed: " + error : messageId() + " of user " + routingKey;
        return String.format("InboundMessage[%s, %s-%d@%d]", what, topic(), partition(), offset());
    }

    public boolean isMalformed() {
        return error != null;
    }

    /**
     * This record as a MALFORMED one with {@code error}, under the same key: a message the job
     * could not decide, audited instead of failing the task.
     */
    public InboundMessage undecided(String error) {
        return new InboundMessage(routingKey, message, error, raw, kind);
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
        return new InboundMessage(routingKey, null, error, raw, kind);
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
            return new InboundMessage(m.userId(), m, null, raw, Kind.MESSAGE);
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
