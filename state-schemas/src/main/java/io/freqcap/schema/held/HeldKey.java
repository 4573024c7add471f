package io.freqcap.schema.held;

import io.freqcap.schema.history.Fingerprints;

/**
 * Where a held message waits in its user's map of held messages: its send time, then the
 * fingerprint of its messageId ({@link Fingerprints#of}), unique among a user's counted messages.
 * Written as two big-endian longs ({@link HeldKeySerializer}), so that RocksDB keeps a user's held
 * messages in send-time order.
 */
public record HeldKey(long sendAt, long fingerprint) {
    public HeldKey {
        if (sendAt < 0) {
            throw new IllegalArgumentException("send time before 1970: " + sendAt);
        }
    }

    /** The key a held delivery waits under. */
    public static HeldKey of(HeldDelivery h) {
        return new HeldKey(h.delivery().sendAt(), Fingerprints.of(h.message().messageId()));
    }
}
