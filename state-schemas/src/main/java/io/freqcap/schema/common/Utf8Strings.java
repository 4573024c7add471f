package io.freqcap.schema.common;

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
 *
 * <p>The strings come from input, so the table is bounded in bytes, not only in entries: strings of
 * more than {@link #MAX_CACHED_BYTES} UTF-8 bytes are never kept (the table holds at most {@link
 * #SIZE} of at most that many bytes, about 2 MB).
 */
public final class Utf8Strings {
    private Utf8Strings() {}

    private record Entry(byte[] utf8, String value) {}

    static final int SIZE = 4096;
    static final int MAX_CACHED_BYTES = 128;
    private static final Entry[] ENTRIES = new Entry[SIZE];

    /** Where {@link #read} puts the bytes it compares, so that a string it knows costs no array. */
    private static final ThreadLocal<byte[]> SCRATCH =
            ThreadLocal.withInitial(() -> new byte[MAX_CACHED_BYTES]);

    /** Reads {@code length} UTF-8 bytes as a string. */
    public static String read(DataInputView in, int length) throws IOException {
        if (length > MAX_CACHED_BYTES) {
            byte[] b = new byte[length];
            in.readFully(b, 0, length);
            return new String(b, StandardCharsets.UTF_8);
        }
        byte[] b = SCRATCH.get();
        in.readFully(b, 0, length);
        int h = 0;
        for (int i = 0; i < length; i++) {
            h = 31 * h + b[i]; // String.hashCode() of ASCII text: both sides find the same entry
        }
        int slot = h & (SIZE - 1);
        Entry e = ENTRIES[slot];
        if (e != null && Arrays.equals(e.utf8, 0, e.utf8.length, b, 0, length)) {
            return e.value;
        }
        byte[] own = Arrays.copyOf(b, length);
        String s = new String(own, StandardCharsets.UTF_8);
        ENTRIES[slot] = new Entry(own, s);
        return s;
    }

    /** The UTF-8 bytes of {@code s}; the caller must not change them. */
    public static byte[] bytes(String s) {
        int slot = s.hashCode() & (SIZE - 1);
        Entry e = ENTRIES[slot];
        if (e != null && (e.value == s || e.value.equals(s))) {
            return e.utf8;
        }
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length <= MAX_CACHED_BYTES) {
            ENTRIES[slot] = new Entry(b, s);
        }
        return b;
    }

    /** The UTF-8 bytes the table holds now (tests). */
    static long bytesHeld() {
        long n = 0;
        for (Entry e : ENTRIES) {
            n += e == null ? 0 : e.utf8.length;
        }
        return n;
    }
}
