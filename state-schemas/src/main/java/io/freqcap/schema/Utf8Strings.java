package io.freqcap.schema;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.flink.core.memory.DataInputView;

/**
 * The few strings histories repeat (channels, categories, campaign ids), each with its UTF-8 bytes,
 * in a small direct-mapped table shared by every task of the JVM: reading a history then returns
 * the same {@code String} each time (its hash already known to the maps the decision looks it up
 * in) instead of decoding a new one, and writing it skips the encoding. A miss just decodes or
 * encodes; many distinct strings only replace each other. Entries are immutable, so a racing reader
 * sees a whole entry or another one, never half of one.
 */
final class Utf8Strings {
    private Utf8Strings() {}

    private record Entry(byte[] utf8, String value) {}

    private static final int SIZE = 4096;
    private static final Entry[] ENTRIES = new Entry[SIZE];

    /** Reads {@code length} UTF-8 bytes as a string. */
    static String read(DataInputView in, int length) throws IOException {
        byte[] b = new byte[length];
        in.readFully(b);
        int h = 0;
        for (byte x : b) {
            h = 31 * h + x; // String.hashCode() of ASCII text: both sides find the same entry
        }
        int slot = h & (SIZE - 1);
        Entry e = ENTRIES[slot];
        if (e != null && Arrays.equals(e.utf8, b)) {
            return e.value;
        }
        String s = new String(b, StandardCharsets.UTF_8);
        ENTRIES[slot] = new Entry(b, s);
        return s;
    }

    /** The UTF-8 bytes of {@code s}; the caller must not change them. */
    static byte[] bytes(String s) {
        int slot = s.hashCode() & (SIZE - 1);
        Entry e = ENTRIES[slot];
        if (e != null && (e.value == s || e.value.equals(s))) {
            return e.utf8;
        }
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        ENTRIES[slot] = new Entry(b, s);
        return b;
    }
}
