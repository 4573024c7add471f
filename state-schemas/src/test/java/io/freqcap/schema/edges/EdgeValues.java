package io.freqcap.schema.edges;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

/**
 * The values of one field of an input record (contract.md §2, §3, §4, §7, §10, §11), drawn from its
 * edges most of the time and from ordinary values otherwise: 0, 1, the bound and one past it,
 * {@code Long.MAX_VALUE} and {@code MIN_VALUE}, negatives, the empty string, the longest string
 * allowed in code points made of astral characters and one longer, {@code null}, the wrong JSON
 * type, numbers no long holds, absent. Each value says whether the contract allows it there.
 *
 * @param edgeShare how often a field takes one of its edges rather than an ordinary value
 * @param breakShare how often a field takes a value the contract refuses
 */
public record EdgeValues(Random r, double edgeShare, double breakShare) {

    /** 10000-01-01T00:00Z: a {@code pausedUntil} from here on means paused for good (§10). */
    public static final long YEAR_10000 = 253_402_300_800_000L;

    /** U+1F600: one code point, two UTF-16 units, four UTF-8 bytes. */
    public static final String ASTRAL = "\uD83D\uDE00";

    private static final long DAY = 86_400_000L;

    /** Zones the contract's readers meet: odd offsets, DST at odd hours, the date line. */
    public static final List<String> ZONES =
            List.of(
                    "UTC",
                    "Europe/Berlin",
                    "Pacific/Chatham",
                    "Asia/Kathmandu",
                    "Australia/Lord_Howe",
                    "Pacific/Kiritimati",
                    "Pacific/Apia",
                    "America/St_Johns",
                    "America/Havana",
                    "America/Santiago",
                    "Asia/Tehran",
                    "Africa/Casablanca",
                    "Antarctica/Troll",
                    "Etc/GMT-14",
                    "Etc/GMT+12",
                    "America/New_York");

    /** Ids no IANA region has (an offset is no region, case matters). */
    static final List<String> BAD_ZONES =
            List.of("+14:00", "UTC+14", "Mars/Olympus", "", "europe/berlin", "GMT+25", " UTC");

    boolean chance(double p) {
        return r.nextDouble() < p;
    }

    <T> T one(List<T> list) {
        return list.get(r.nextInt(list.size()));
    }

    /** One of the valid edges most of the time, an ordinary value otherwise, or a broken one. */
    Value pick(Supplier<Value> ordinary, List<Value> edges, List<Value> broken) {
        if (!broken.isEmpty() && chance(breakShare)) {
            return one(broken);
        }
        if (edges.isEmpty() || !chance(edgeShare)) {
            return ordinary.get();
        }
        return one(edges);
    }

    // ---- JSON text

    static Value str(String s) {
        return Value.valid(quote(s, false));
    }

    static Value num(long n) {
        return Value.valid(Long.toString(n));
    }

    /**
     * A JSON string literal; non-ASCII characters as UTF-8 or, when {@code escape}, as {@code \\u}
     * escapes (both are the same string on the wire's other side, of different byte lengths). A
     * lone surrogate can only be written escaped.
     */
    static String quote(String s, boolean escape) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c == '\n') {
                b.append("\\n");
            } else if (!escape
                    && Character.isHighSurrogate(c)
                    && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                b.append(c).append(s.charAt(++i));
            } else if (c < 0x20 || (c >= 0x80 && (escape || Character.isSurrogate(c)))) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    /** A string literal written one way or the other. */
    Value text(String s) {
        return Value.valid(quote(s, chance(0.3)));
    }

    static String repeat(String s, int n) {
        return s.repeat(Math.max(0, n));
    }

    /** Values the contract refuses, written as {@code json}. */
    static List<Value> invalid(String... json) {
        List<Value> out = new ArrayList<>();
        for (String j : json) {
            out.add(Value.invalid(j));
        }
        return out;
    }

    /** Values of the wrong JSON type for a string field. */
    static List<Value> notStrings() {
        return invalid("42", "[]", "{}", "true", "[\"a\"]", "1.5");
    }

    /** Values of the wrong JSON type, or out of range, for an integer field. */
    static List<Value> notIntegers() {
        return join(
                invalid("\"42\"", "[]", "{}", "true", "42.0", "4.2e1"),
                // no long holds them
                invalid(
                        "1e400",
                        "-1e400",
                        "9223372036854775808",
                        "-9223372036854775809",
                        "123456789012345678901234567890"));
    }

    static List<Value> join(List<Value> a, List<Value> b) {
        List<Value> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    // ---- fields

    /** A userId (§2: a JSON integer 0..2^63-1), required. */
    Value userId(Supplier<Long> ordinary) {
        return pick(
                () -> num(ordinary.get()),
                List.of(
                        num(0),
                        num(1),
                        num(Integer.MAX_VALUE),
                        num(0xFFFF_FFFFL),
                        num(1L << 32),
                        num(Long.MAX_VALUE - 1),
                        num(Long.MAX_VALUE)),
                join(
                        List.of(
                                Value.invalid("-1"),
                                Value.invalid(Long.toString(Long.MIN_VALUE)),
                                Value.invalid("null"),
                                Value.MISSING),
                        notIntegers()));
    }

    /** A required epoch-ms time (§2 timestamp): an integer ≥ 0. */
    Value epochMillis(Supplier<Long> ordinary, boolean required) {
        List<Value> broken =
                join(
                        List.of(
                                Value.invalid("-1"),
                                Value.invalid(Long.toString(Long.MIN_VALUE)),
                                required ? Value.invalid("null") : Value.valid("null"),
                                required ? Value.MISSING : Value.ABSENT),
                        notIntegers());
        return pick(() -> num(ordinary.get()), timeEdges(), broken);
    }

    static List<Value> timeEdges() {
        return List.of(
                num(0),
                num(1),
                num(YEAR_10000 - 1),
                num(YEAR_10000),
                num(YEAR_10000 + 1),
                num(Long.MAX_VALUE - 90 * DAY),
                num(Long.MAX_VALUE - DAY),
                num(Long.MAX_VALUE - 1),
                num(Long.MAX_VALUE));
    }

    /**
     * A string of 1..max code points (messageId, category, campaignId, a receipt's status).
     *
     * @param required whether absent or {@code null} is refused
     */
    Value codePoints(int max, Supplier<String> ordinary, boolean required) {
        List<Value> edges = new ArrayList<>();
        edges.add(text("a"));
        edges.add(text(ASTRAL));
        edges.add(text(repeat("x", max)));
        edges.add(text(repeat(ASTRAL, max)));
        edges.add(text(repeat("y", max - 1) + ASTRAL));
        edges.add(text("\u0000"));
        edges.add(text("a/b \"c\" \\d\n\u00e9"));
        edges.add(text("e\u0301")); // two code points that render as one
        if (!required) {
            edges.add(Value.ABSENT);
            edges.add(Value.valid("null"));
        }
        List<Value> broken = new ArrayList<>(notStrings());
        broken.add(Value.invalid("\"\""));
        broken.add(new Value(quote(repeat(ASTRAL, max + 1), chance(0.5)), Validity.INVALID));
        broken.add(Value.invalid(quote(repeat("x", max + 1), false)));
        // A lone surrogate: a JSON escape that is no character. The contract does not say.
        broken.add(Value.invalid("\"\\ud800\"")); // MALFORMED (decided in issue 46)
        if (required) {
            broken.add(Value.invalid("null"));
            broken.add(Value.MISSING);
        }
        return pick(() -> text(ordinary.get()), edges, broken);
    }

    /** A name of the channel pattern {@code [a-z0-9_-]{1,32}} (§2), required or not. */
    Value channelName(Supplier<String> ordinary, boolean required) {
        List<Value> edges =
                List.of(
                        str("a"),
                        str("0"),
                        str("-"),
                        str("_"),
                        str(repeat("z", 32)),
                        str("push_v2-x"),
                        str("sms"),
                        str("email"));
        List<Value> broken = new ArrayList<>(notStrings());
        broken.addAll(
                List.of(
                        Value.invalid("\"\""),
                        Value.invalid(quote(repeat("z", 33), false)),
                        Value.invalid("\"Push\""),
                        Value.invalid("\"pu sh\""),
                        Value.invalid(quote("\u00fc", chance(0.5))),
                        Value.invalid(quote(ASTRAL, chance(0.5))),
                        Value.invalid("\"push\\n\"")));
        if (required) {
            broken.add(Value.invalid("null"));
            broken.add(Value.MISSING);
        }
        return pick(() -> str(ordinary.get()), edges, broken);
    }

    /** Just the name text of the channel pattern, for a map's keys and name lists. */
    String channelNameText(Supplier<String> ordinary) {
        return chance(edgeShare)
                ? one(List.of("a", "0", "-", "_", repeat("z", 32), "push", "sms", "email"))
                : ordinary.get();
    }

    /** An IANA region id, optional: absent or null means the config's (§2, §3). */
    Value zone(Supplier<String> ordinary) {
        List<Value> broken = new ArrayList<>(notStrings());
        for (String z : BAD_ZONES) {
            broken.add(Value.invalid(quote(z, false)));
        }
        List<Value> edges = new ArrayList<>();
        for (String z : ZONES) {
            edges.add(str(z));
        }
        edges.add(Value.ABSENT);
        edges.add(Value.valid("null"));
        return pick(() -> str(ordinary.get()), edges, broken);
    }

    /** A message's priority (§2): 0..100, absent or null for 0. */
    Value priority(Supplier<Integer> ordinary) {
        return pick(
                () -> num(ordinary.get()),
                List.of(num(0), num(1), num(99), num(100), Value.ABSENT, Value.valid("null")),
                join(
                        List.of(
                                Value.invalid("-1"),
                                Value.invalid("101"),
                                Value.invalid(Long.toString(Integer.MAX_VALUE + 1L)),
                                Value.invalid(Long.toString(Long.MAX_VALUE))),
                        notIntegers()));
    }

    /** A positive version (§3, §4, §10). */
    Value version(Supplier<Long> ordinary) {
        return pick(
                () -> num(ordinary.get()),
                List.of(num(1), num(Long.MAX_VALUE)),
                join(
                        List.of(
                                Value.invalid("0"),
                                Value.invalid("-1"),
                                Value.invalid("null"),
                                Value.MISSING),
                        notIntegers()));
    }

    /** A duration of the window syntax and its length; length -1 when refused or unsettled. */
    record Window(Value value, long millis) {}

    private static final long S = 1000L;
    private static final long MAX_WINDOW = 90 * DAY;

    Window window(Supplier<String> ordinary) {
        if (chance(breakShare)) {
            return new Window(
                    one(
                            join(
                                    List.of(
                                            Value.invalid("\"0s\""),
                                            Value.invalid("\"0d\""),
                                            Value.invalid("\"91d\""),
                                            Value.invalid("\"13w\""),
                                            Value.invalid("\"7776001s\""),
                                            Value.invalid("\"2160h1s\""),
                                            Value.invalid("\"-1d\""),
                                            Value.invalid("\"1.5d\""),
                                            Value.invalid("\"1D\""),
                                            Value.invalid("\"\""),
                                            Value.invalid("\"1 d\""),
                                            Value.invalid("\" 1d\""),
                                            Value.invalid("\"d\""),
                                            Value.invalid("\"1dd\""),
                                            Value.invalid("\"99999999999999999999d\""),
                                            Value.invalid("\"1y\"")),
                                    notStrings())),
                    -1);
        }
        String w =
                chance(edgeShare)
                        ? one(
                                List.of(
                                        "1s",
                                        "59s",
                                        "1m",
                                        "1h",
                                        "1d",
                                        "90d",
                                        "2160h",
                                        "7776000s",
                                        "129600m",
                                        "12w"))
                        : ordinary.get();
        return new Window(str(w), windowMillis(w));
    }

    /** The length of a window this class writes as valid. */
    static long windowMillis(String w) {
        long n = Long.parseLong(w.substring(0, w.length() - 1));
        long unit =
                switch (w.charAt(w.length() - 1)) {
                    case 's' -> S;
                    case 'm' -> 60 * S;
                    case 'h' -> 3600 * S;
                    case 'd' -> DAY;
                    default -> 7 * DAY;
                };
        long millis = n * unit;
        if (millis <= 0 || millis > MAX_WINDOW) {
            throw new IllegalArgumentException("not a valid window: " + w);
        }
        return millis;
    }

    /** A limit's max (§3): an integer 0..1,000,000. */
    Value limitMax(Supplier<Integer> ordinary) {
        return pick(
                () -> num(ordinary.get()),
                List.of(num(0), num(1), num(2), num(1_000_000)),
                join(
                        List.of(
                                Value.invalid("-1"),
                                Value.invalid("1000001"),
                                Value.invalid("2147483648"),
                                Value.invalid("1e6"),
                                Value.invalid("null"),
                                Value.MISSING),
                        notIntegers()));
    }

    /** A local time {@code HH:MM} of quiet hours (§3). */
    Value localTime(Supplier<String> ordinary) {
        return pick(
                () -> str(ordinary.get()),
                List.of(
                        str("00:00"),
                        str("23:59"),
                        str("02:00"),
                        str("02:30"),
                        str("03:00"),
                        str("01:59"),
                        str("12:00")),
                join(
                        List.of(
                                Value.invalid("\"24:00\""),
                                Value.invalid("\"2:00\""),
                                Value.invalid("\"02:60\""),
                                Value.invalid("\"21:00:00\""),
                                Value.invalid("\"\""),
                                Value.invalid("null"),
                                Value.MISSING),
                        notStrings()));
    }
}
