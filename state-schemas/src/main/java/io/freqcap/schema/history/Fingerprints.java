package io.freqcap.schema.history;

/** The 56-bit fingerprints of messageIds that histories keep instead of the ids (DUPLICATE). */
public final class Fingerprints {
    private Fingerprints() {}

    /** Fingerprints keep 56 bits: seven bytes in state. */
    public static final long MASK = (1L << 56) - 1;

    /** A 56-bit fingerprint of a messageId: FNV-1a over its chars, a full avalanche, 56 bits. */
    public static long of(String messageId) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < messageId.length(); i++) {
            h ^= messageId.charAt(i);
            h *= 0x100000001b3L;
        }
        h ^= messageId.length();
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h & MASK;
    }
}
