package io.freqcap.schema.common;

import java.nio.charset.StandardCharsets;

/** Short descriptions of byte arrays for {@code toString}s (records may hold megabytes). */
public final class Bytes {
    private Bytes() {}

    public static String describe(byte[] b) {
        if (b == null) {
            return "null";
        }
        int n = Math.min(b.length, 200);
        String start = new String(b, 0, n, StandardCharsets.UTF_8);
        return b.length <= n ? start : start + "... (" + b.length + " bytes)";
    }
}
