package io.freqcap.schema.mirror;

import io.freqcap.schema.history.CountedHistory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * A user's log in the Redis mirror (contract.md §7, layout 2): {@code {"v": 2, "log": [[score,
 * channel, messageId], ...]}}, ascending by score, then messageId by code points, written with the
 * spacing of the contract's example. Plain Java: the capping task builds one per changed user,
 * {@code freqcap-query} and the tests read them back.
 */
public final class MirrorLog {
    /** The layout's version, the value's {@code "v"}. */
    public static final int VERSION = 2;

    /** One entry: when it counts (its timestamp or a held message's send time), where, which. */
    public record Entry(long score, String channel, String messageId) {}

    /** Score, then messageId by code points (not UTF-16 units). */
    public static final Comparator<Entry> ORDER =
            Comparator.comparingLong(Entry::score)
                    .thenComparing(Entry::messageId, MirrorLog::compareCodePoints);

    private final List<Entry> entries = new ArrayList<>();
    private long highest = Long.MIN_VALUE;

    /**
     * The write of a user's log (contract.md §7): every entry with a messageId counted at or after
     * its latest stamped timestamp minus the window, expiring a window after the highest; the key's
     * deletion when there is none (entries counted while the mirror was off have no messageId).
     */
    public static MirrorWrite of(long user, CountedHistory h, long window) {
        MirrorLog log = new MirrorLog();
        if (!h.isEmpty()) {
            h.forEachFrom(
                    plus(h.latestStamped(), window == Long.MIN_VALUE ? Long.MAX_VALUE : -window),
                    (score, channel, id) -> {
                        if (id != null) {
                            log.add(score, channel, id);
                        }
                    });
        }
        return log.write(user, window);
    }

    /** Adds an entry (in any order). */
    public void add(long score, String channel, String messageId) {
        entries.add(new Entry(score, channel, messageId));
        highest = Math.max(highest, score);
    }

    public int size() {
        return entries.size();
    }

    /** The highest score added; only for a log with entries. */
    public long highestScore() {
        return highest;
    }

    /**
     * The write of this log for {@code user}: its value until its highest score plus {@code
     * window}, or the key's deletion when it has no entry.
     */
    public MirrorWrite write(long user, long window) {
        if (entries.isEmpty()) {
            return MirrorWrite.deletion(user, 0);
        }
        return MirrorWrite.log(user, encode(), plus(highest, window), entries.size());
    }

    /** The value, UTF-8. */
    public byte[] encode() {
        Entry[] sorted = entries.toArray(new Entry[0]);
        if (!isSorted(sorted)) {
            Arrays.sort(sorted, ORDER);
        }
        StringBuilder s = new StringBuilder(24 + sorted.length * 40);
        s.append("{\"v\": ").append(VERSION).append(", \"log\": [");
        for (int i = 0; i < sorted.length; i++) {
            Entry e = sorted[i];
            if (i > 0) {
                s.append(", ");
            }
            s.append('[').append(e.score()).append(", ");
            quote(s, e.channel());
            s.append(", ");
            quote(s, e.messageId());
            s.append(']');
        }
        s.append("]}");
        return s.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static boolean isSorted(Entry[] a) {
        for (int i = 1; i < a.length; i++) {
            if (ORDER.compare(a[i - 1], a[i]) > 0) {
                return false;
            }
        }
        return true;
    }

    /** A JSON string as Jackson writes it: quotes, backslashes and control characters escaped. */
    static void quote(StringBuilder s, String v) {
        s.append('"');
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            switch (c) {
                case '"' -> s.append("\\\"");
                case '\\' -> s.append("\\\\");
                case '\n' -> s.append("\\n");
                case '\r' -> s.append("\\r");
                case '\t' -> s.append("\\t");
                case '\b' -> s.append("\\b");
                case '\f' -> s.append("\\f");
                default -> {
                    if (c < 0x20) {
                        s.append(String.format("\\u%04X", (int) c));
                    } else {
                        s.append(c);
                    }
                }
            }
        }
        s.append('"');
    }

    /** Compares two strings by code points (what the contract orders messageIds by). */
    public static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    }

    /** {@code a + b}, saturating at {@link Long#MAX_VALUE} and {@link Long#MIN_VALUE}. */
    public static long plus(long a, long b) {
        long r = a + b;
        if (((a ^ r) & (b ^ r)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return r;
    }

    /**
     * Reads a value this class wrote (or any JSON of the same shape): the entries, in the value's
     * order. For readers and tests; throws {@link IllegalArgumentException} on anything else.
     */
    public static List<Entry> decode(byte[] value) {
        try {
            return new Reader(new String(value, StandardCharsets.UTF_8)).value();
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException e) { // truncated: an index past the end
            throw new IllegalArgumentException("not a log of version 2: " + e.getMessage(), e);
        }
    }

    /** A small reader of the log's one shape, so that readers need no JSON library. */
    private static final class Reader {
        private final String s;
        private int p;

        Reader(String s) {
            this.s = s;
        }

        List<Entry> value() {
            expect('{');
            List<Entry> out = null;
            Long v = null;
            do {
                String field = string();
                expect(':');
                if (field.equals("v")) {
                    v = number();
                } else if (field.equals("log")) {
                    out = log();
                } else {
                    throw new IllegalArgumentException("unknown field " + field);
                }
            } while (next(','));
            expect('}');
            skip();
            if (p != s.length() || v == null || v != VERSION || out == null) {
                throw new IllegalArgumentException("not a log of version 2: " + s);
            }
            return out;
        }

        private List<Entry> log() {
            expect('[');
            List<Entry> out = new ArrayList<>();
            if (next(']')) {
                return out;
            }
            do {
                expect('[');
                long score = number();
                expect(',');
                String channel = string();
                expect(',');
                String id = string();
                expect(']');
                out.add(new Entry(score, channel, id));
            } while (next(','));
            expect(']');
            return out;
        }

        private long number() {
            skip();
            int start = p;
            if (p < s.length() && s.charAt(p) == '-') {
                p++;
            }
            while (p < s.length() && Character.isDigit(s.charAt(p))) {
                p++;
            }
            return Long.parseLong(s.substring(start, p));
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (s.charAt(p) != '"') {
                char c = s.charAt(p++);
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = s.charAt(p++);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 't' -> b.append('\t');
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'u' -> {
                        b.append((char) Integer.parseInt(s.substring(p, p + 4), 16));
                        p += 4;
                    }
                    default -> b.append(e);
                }
            }
            p++;
            return b.toString();
        }

        private boolean next(char c) {
            skip();
            if (p < s.length() && s.charAt(p) == c) {
                p++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!next(c)) {
                throw new IllegalArgumentException("expected '" + c + "' at " + p + " of " + s);
            }
        }

        private void skip() {
            while (p < s.length() && Character.isWhitespace(s.charAt(p))) {
                p++;
            }
        }
    }
}
