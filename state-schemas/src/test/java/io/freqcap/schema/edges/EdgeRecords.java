package io.freqcap.schema.edges;

import static io.freqcap.schema.edges.EdgeValues.ASTRAL;
import static io.freqcap.schema.edges.EdgeValues.YEAR_10000;
import static io.freqcap.schema.edges.EdgeValues.invalid;
import static io.freqcap.schema.edges.EdgeValues.num;
import static io.freqcap.schema.edges.EdgeValues.quote;
import static io.freqcap.schema.edges.EdgeValues.repeat;
import static io.freqcap.schema.edges.EdgeValues.str;

import io.freqcap.schema.edges.EdgeInput.Topic;
import io.freqcap.schema.segment.SegmentBitmap;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The records of every input topic (contract.md §2, §3, §4, §7, §10, §11), made field by field from
 * {@link EdgeValues}, in a small world that keeps them related: the users, campaigns, messageIds
 * and versions earlier records used, the time zone and the clock. With few users and few edges
 * ("coherent") the records collide and reach deep paths (held messages, preemption, cancels); with
 * every field at its edges ("wild") they find what parsing and arithmetic make of hostile values.
 */
final class EdgeRecords {
    private static final long MINUTE = 60_000L;
    private static final long HOUR = 60 * MINUTE;
    private static final long DAY = 24 * HOUR;

    final EdgeValues v;
    final Random r;

    /**
     * Draws lifetime limits and {@code end-campaign} (contract v6) from a stream of its own, so
     * that the main stream's draws stay as they were; null: none drawn.
     */
    Random lifetimes;

    /** Whether the lifetime limits drawn are all valid (a config that must be). */
    boolean lifetimesValid;

    final boolean coherent;
    final int maxRecordBytes;

    final List<Long> users;
    final List<String> channels = List.of("push", "sms", "email");
    final List<String> categories;

    /** Campaigns as JSON values, and the decimal text or string each is taken as. */
    final List<String> campaignJson;

    final List<String> messageIds = new ArrayList<>();
    final String zone;
    final List<String> segments;
    final Map<String, Long> segmentVersions = new HashMap<>();
    final Map<Long, Long> preferenceVersions = new HashMap<>();
    long configVersion = 1;

    /** The time messages are stamped around, moving on as the sequence goes. */
    long cursor;

    private int nextMessage;

    EdgeRecords(EdgeValues v, boolean coherent, int maxRecordBytes, long base, String zone) {
        this.v = v;
        this.r = v.r();
        this.coherent = coherent;
        this.maxRecordBytes = maxRecordBytes;
        this.cursor = base;
        this.zone = zone;
        List<Long> pool =
                List.of(
                        0L,
                        7L,
                        42L,
                        0xFFFF_FFFFL,
                        1L << 32,
                        Long.MAX_VALUE - 1,
                        Long.MAX_VALUE,
                        1001L,
                        1002L);
        List<Long> some = new ArrayList<>(pool);
        java.util.Collections.shuffle(some, r);
        this.users = coherent ? List.copyOf(some.subList(0, 2 + r.nextInt(3))) : pool;
        this.categories =
                List.of(
                        "marketing",
                        "promo",
                        "transactional",
                        coherent ? "news" : "Promo Deals",
                        repeat(ASTRAL, 64));
        this.campaignJson =
                List.of(
                        str("spring-sale").json(),
                        quote(repeat(ASTRAL, 128), r.nextBoolean()),
                        "7",
                        "9223372036854775808");
        this.segments = List.of("vip", "new", repeat(ASTRAL, 64));
    }

    long user() {
        return v.one(users);
    }

    // ---- messages (§2)

    String messageIdText() {
        if (!messageIds.isEmpty() && v.chance(coherent ? 0.25 : 0.1)) {
            return v.one(messageIds); // a collision: a duplicate, or a retry once freed
        }
        String id = "m-" + nextMessage++;
        messageIds.add(id);
        return id;
    }

    /**
     * A time near the cursor, mostly at or after it; sometimes days before (STALE), or most of a
     * day ahead (a campaign scheduled for tomorrow: within the default {@code --max-future}).
     */
    long messageTime() {
        cursor = sat(cursor + (long) (r.nextDouble() * 90 * MINUTE));
        if (v.chance(0.05)) {
            return sat(cursor - (1 + r.nextInt(10)) * DAY);
        }
        if (v.chance(0.04)) {
            return sat(cursor + 12 * HOUR + r.nextInt((int) (11 * HOUR)));
        }
        return sat(cursor + r.nextInt((int) (2 * HOUR)) - HOUR);
    }

    /** {@code a} kept within 0..Long.MAX_VALUE. */
    static long sat(long a) {
        return a < 0 ? (a < -DAY * 365 * 1000 ? Long.MAX_VALUE : 0) : a;
    }

    Value campaign() {
        if (v.chance(v.breakShare())) {
            return v.one(
                    List.of(
                            Value.invalid("\"\""),
                            Value.invalid(quote(repeat(ASTRAL, 129), r.nextBoolean())),
                            Value.invalid("1.5"),
                            Value.invalid("1e400"),
                            Value.invalid("true"),
                            Value.invalid("[]"),
                            Value.invalid("{}")));
        }
        if (v.chance(0.3)) {
            return v.chance(0.5) ? Value.ABSENT : Value.valid("null");
        }
        if (!coherent && v.chance(0.1)) {
            // A JSON integer whose decimal text is longer than a string campaignId may be:
            // MALFORMED, as the string would be (decided in issue 46).
            return Value.invalid(repeat("9", 200));
        }
        return Value.valid(v.one(campaignJson));
    }

    Value payload() {
        int pick = r.nextInt(10);
        return switch (pick) {
            case 0 -> Value.ABSENT;
            case 1 -> Value.valid("{\"n\":1e400,\"m\":-0,\"s\":" + quote(ASTRAL, true) + "}");
            case 2 -> Value.valid(repeat("[", 50) + repeat("]", 50));
            case 3 ->
                    // Deeper than Jackson reads by default; "any" payload, says the contract.
                    Value.unsettled(repeat("[", 1500) + repeat("]", 1500));
            default -> Value.valid("{\"title\":\"hi\"}");
        };
    }

    private static boolean pastYear9999(Value v) {
        if (v.validity() != Validity.VALID || v.json() == null || !v.json().matches("\\d+")) {
            return false;
        }
        return new java.math.BigInteger(v.json())
                        .compareTo(java.math.BigInteger.valueOf(EdgeValues.YEAR_10000))
                >= 0;
    }

    EdgeInput message() {
        Obj o = new Obj();
        o.put("messageId", v.codePoints(128, this::messageIdText, true));
        o.put("userId", v.userId(this::user));
        o.put("channel", v.channelName(() -> v.one(channels), true));
        o.put("category", v.codePoints(64, () -> v.one(categories), false));
        o.put("campaignId", campaign());
        Value stamp = v.epochMillis(this::messageTime, true);
        // A message stamped from the year 10000 on is MALFORMED (decided in issue 46).
        o.put("timestamp", pastYear9999(stamp) ? Value.invalid(stamp.json()) : stamp);
        o.put("timezone", v.zone(() -> zone));
        o.put("priority", v.priority(() -> v.one(List.of(0, 0, 10, 50, 80, 100))));
        o.put("payload", payload());
        if (v.chance(0.05)) {
            o.put("fatigueHint", Value.valid("{\"unknown\":[1,2,3]}")); // unknown fields pass
        }
        String key = messageKey();
        String json = o.json(r);
        Validity validity = o.validity();
        if (!coherent && v.chance(0.1)) {
            return structural(Topic.MESSAGES, key, json, validity, o.why(), o.has("userId"));
        }
        if (v.chance(0.08)) {
            json = padded(key, json);
        }
        return EdgeInput.of(Topic.MESSAGES, key, json, validity, o.why());
    }

    String messageKey() {
        int pick = r.nextInt(coherent ? 10 : 6);
        return switch (pick) {
            case 0 -> Long.toString(user());
            case 1 -> coherent ? null : "not-a-user";
            case 2 -> coherent ? null : "";
            case 3 -> coherent ? null : repeat(ASTRAL, 300);
            default -> null;
        };
    }

    /**
     * The value with a padding field so that key and value together are {@code --max-record-bytes}
     * give or take one (one more is "record too large").
     */
    String padded(String key, String json) {
        int keyBytes = key == null ? 0 : key.getBytes(StandardCharsets.UTF_8).length;
        int target = maxRecordBytes + r.nextInt(3) - 1;
        String head = json.substring(0, json.length() - 1) + (json.length() > 2 ? "," : "");
        String open = head + "\"pad\":\"";
        int room =
                target - keyBytes - open.getBytes(StandardCharsets.UTF_8).length - "\"}".length();
        if (room < 0 || room > 2_000_000) {
            return json;
        }
        return open + repeat("p", room) + "\"}";
    }

    /** A value whose shape is wrong or odd: cut, trailing bytes, a second object, no value. */
    EdgeInput structural(
            Topic topic, String key, String json, Validity fields, String why, boolean hasUserId) {
        byte[] k = EdgeInput.bytes(key);
        switch (r.nextInt(12)) {
            case 0:
                return topic == Topic.PREFERENCES
                        ? tombstone(key)
                        : new EdgeInput(topic, k, null, Validity.INVALID, "no value (tombstone)");
            case 1:
                return EdgeInput.of(topic, key, "", Validity.INVALID, "empty value");
            case 2:
                return EdgeInput.of(
                        topic,
                        key,
                        v.one(List.of("[]", "null", "42", "\"x\"", "{}")),
                        Validity.INVALID,
                        "not an object with the fields");
            case 3:
                return EdgeInput.of(
                        topic,
                        key,
                        json.substring(0, r.nextInt(json.length())),
                        Validity.INVALID,
                        "cut short");
            case 4:
                return EdgeInput.of(
                        topic,
                        key,
                        json + v.one(List.of(" x", "{}", ",", "]")),
                        Validity.INVALID,
                        "bytes after the object");
            case 5:
                return EdgeInput.of(topic, key, " \t" + json + "\r\n ", fields, why);
            case 6:
                // A byte order mark: not JSON's, though many readers skip it.
                return EdgeInput.of(
                        topic, key, "\uFEFF" + json, Validity.UNSETTLED, "byte order mark");
            case 7:
                // A key twice: which one holds, the contract does not say.
                return hasUserId
                        ? EdgeInput.of(
                                topic,
                                key,
                                "{\"userId\":1," + json.substring(1),
                                Validity.UNSETTLED,
                                "userId twice")
                        : EdgeInput.of(topic, key, json, fields, why);
            case 8:
                {
                    byte[] noise = new byte[r.nextInt(64)];
                    r.nextBytes(noise);
                    noise = Arrays.copyOf(noise, noise.length + 1);
                    noise[noise.length - 1] = (byte) 0xC3; // never valid UTF-8 at the end
                    return new EdgeInput(topic, k, noise, Validity.INVALID, "noise");
                }
            case 9:
                {
                    // Bytes that are not UTF-8 inside a string.
                    byte[] b = EdgeInput.bytes(json);
                    int at = indexOf(b, (byte) '"', r.nextInt(b.length));
                    if (at < 0) {
                        return EdgeInput.of(topic, key, json, fields, why);
                    }
                    byte[] out = new byte[b.length + 2];
                    System.arraycopy(b, 0, out, 0, at + 1);
                    out[at + 1] = (byte) 0xC3;
                    out[at + 2] = (byte) 0x28;
                    System.arraycopy(b, at + 1, out, at + 3, b.length - at - 1);
                    return new EdgeInput(topic, k, out, Validity.UNSETTLED, "not UTF-8");
                }
            default:
                return EdgeInput.of(topic, key, json, fields, why);
        }
    }

    private static int indexOf(byte[] b, byte x, int from) {
        for (int i = from; i < b.length; i++) {
            if (b[i] == x) {
                return i;
            }
        }
        return -1;
    }

    // ---- limit configs (§3)

    /** A holder of the longest window (calendar limits as 3d, 9d, 33d) of the lists written. */
    static final class Longest {
        long millis;
    }

    /** A limit: rolling or calendar, its max, a reserve sometimes. */
    Value limit(boolean reservable, Longest longest) {
        Obj o = new Obj();
        int kind = v.chance(v.breakShare() / 3) ? 2 + r.nextInt(2) : r.nextInt(10) < 6 ? 0 : 1;
        if (shortWindows && kind == 1) {
            kind = 0;
        }
        if (kind == 0 || kind == 2) {
            List<String> ordinary =
                    shortWindows
                            ? List.of("30m", "1h", "2h")
                            : List.of("1h", "1d", "7d", "3d", "30m", "2h");
            EdgeValues.Window w = v.window(() -> v.one(ordinary));
            o.put("window", w.value());
            longest.millis = Math.max(longest.millis, w.millis());
        }
        if (kind == 1 || kind == 2) {
            String cal = v.one(List.of("day", "week", "month"));
            if (v.chance(v.breakShare())) {
                o.put("calendar", v.one(invalid("\"year\"", "\"Day\"", "\"\"", "1")));
            } else {
                o.put("calendar", str(cal));
                long days = cal.equals("day") ? 3 : cal.equals("week") ? 9 : 33;
                longest.millis = Math.max(longest.millis, days * DAY);
            }
        }
        if (kind == 2) {
            o.and(Validity.INVALID, "window and calendar both");
        } else if (kind == 3) {
            o.and(Validity.INVALID, "neither window nor calendar");
        }
        Value max = v.limitMax(() -> 1 + r.nextInt(4));
        o.put("max", max);
        if (v.chance(coherent ? 0.25 : 0.15)) {
            o.put("reserve", reserve(max, reservable));
        }
        return o.value(r);
    }

    Value reserve(Value max, boolean reservable) {
        int m = max.validity() == Validity.VALID ? Integer.parseInt(max.json()) : 1;
        Obj o = new Obj();
        if (v.chance(v.breakShare())) {
            o.put("slots", v.one(List.of(num(0), num(m + 1L), num(-1), Value.MISSING)));
            o.and(Validity.INVALID, "slots");
        } else {
            o.put("slots", num(v.chance(0.5) ? 1 : Math.max(1, m)));
            if (m == 0) {
                o.and(Validity.INVALID, "reserve of a max of 0"); // 1..max has nothing in it
            }
        }
        if (v.chance(v.breakShare())) {
            o.put("priority", v.one(List.of(num(0), num(101), Value.invalid("\"50\""))));
            o.and(Validity.INVALID, "priority");
        } else {
            o.put("priority", num(v.one(List.of(1, 50, 70, 100))));
        }
        if (!reservable) {
            o.and(Validity.INVALID, "reserve where none is allowed");
        }
        return o.value(r);
    }

    /**
     * A rule's {@code campaign} list: a list of limits, with a lifetime limit (§3) at its front or
     * end often.
     */
    Value campaignLimits(Longest longest) {
        Value l = limits(false, true, longest);
        if (lifetimes == null || lifetimes.nextInt(10) < 4) {
            return l;
        }
        int n;
        try {
            n = io.freqcap.schema.common.Json.MAPPER.readTree(l.json()).size();
        } catch (Exception e) {
            return l;
        }
        Value lifetime = lifetimeLimit(longest);
        boolean front = lifetimes.nextBoolean();
        String inner = l.json().substring(1, l.json().length() - 1);
        String json =
                "["
                        + (front ? lifetime.json() : inner)
                        + (inner.isEmpty() ? "" : ",")
                        + (front ? inner : lifetime.json())
                        + "]";
        if (inner.isEmpty()) {
            json = "[" + lifetime.json() + "]";
        }
        Validity validity = l.validity().and(lifetime.validity());
        String why = l.why() != null ? l.why() : lifetime.why();
        if (n + 1 > 16) {
            validity = Validity.INVALID;
            why = "length " + (n + 1);
        }
        return new Value(json, validity, why);
    }

    /** A lifetime limit at its edges: max 0, 1, 1,000,000 and one past, a reserve, bad kinds. */
    Value lifetimeLimit(Longest longest) {
        int k = lifetimes.nextInt(20);
        if (lifetimesValid && k >= 10 && k <= 13) {
            k = 0;
        }
        return switch (k) {
            case 8, 9 ->
                    Value.valid(
                            "{\"lifetime\":true,\"max\":"
                                    + (2 + lifetimes.nextInt(2))
                                    + ",\"reserve\":{\"slots\":1,\"priority\":70}}");
            case 10 -> new Value("{\"lifetime\":true,\"max\":1000001}", Validity.INVALID, "max");
            case 11 -> new Value("{\"lifetime\":false,\"max\":1}", Validity.INVALID, "lifetime");
            case 12 -> new Value("{\"lifetime\":\"true\",\"max\":1}", Validity.INVALID, "lifetime");
            case 13 ->
                    new Value(
                            "{\"lifetime\":true,\"window\":\"1d\",\"max\":1}",
                            Validity.INVALID,
                            "lifetime and window");
            case 14 -> {
                // a window after all: the longest the rule's hold may reach
                longest.millis = Math.max(longest.millis, DAY);
                yield Value.valid("{\"lifetime\":null,\"window\":\"1d\",\"max\":1}");
            }
            default ->
                    Value.valid(
                            "{\"lifetime\":true,\"max\":"
                                    + List.of(0, 1, 1, 2, 3, 1_000_000).get(lifetimes.nextInt(6))
                                    + "}");
        };
    }

    /** A list of limits; {@code nonEmpty} where the contract asks for at least one. */
    Value limits(boolean nonEmpty, boolean reservable, Longest longest) {
        int n;
        Validity size = Validity.VALID;
        if (v.chance(v.breakShare() / 4)) {
            n = v.chance(0.5) && nonEmpty ? 0 : 17;
            size = Validity.INVALID;
        } else if (v.chance(v.edgeShare() / 10)) {
            n = 16;
        } else {
            n = (nonEmpty ? 1 : 0) + r.nextInt(3);
        }
        Validity validity = size;
        String why = size == Validity.VALID ? null : "length " + n;
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < n; i++) {
            Value l = limit(reservable, longest);
            if (validity.and(l.validity()) != validity) {
                why = "[" + i + "]" + (l.why() == null ? "" : "." + l.why());
            }
            validity = validity.and(l.validity());
            b.append(i > 0 ? "," : "").append(l.json());
        }
        return new Value(b.append(']').toString(), validity, why);
    }

    /**
     * Limits by name: {@code channels}, {@code categories} of a rule or a user's preferences.
     *
     * @param anyCategory names are categories of 1..64 code points (a user's, §10), not the channel
     *     pattern
     */
    Value named(boolean reservable, boolean anyCategory, Longest longest) {
        if (v.chance(v.edgeShare() / 20)) {
            // At the bound of 64 names, and one past it: short lists, plain names.
            int n = v.chance(0.5) ? 64 : 65;
            StringBuilder b = new StringBuilder("{");
            for (int i = 0; i < n; i++) {
                b.append(i > 0 ? "," : "").append("\"c").append(i).append("\":[]");
            }
            return new Value(
                    b.append('}').toString(),
                    n == 64 ? Validity.UNSETTLED : Validity.INVALID, // empty lists: unsettled
                    n + " names");
        }
        int n = r.nextInt(3);
        Validity validity = Validity.VALID;
        String why = null;
        StringBuilder b = new StringBuilder("{");
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < n; i++) {
            String name;
            Validity nameValidity = Validity.VALID;
            if (v.chance(v.breakShare() / 2)) {
                name = v.one(List.of("", repeat("z", 33), "Push", "pu sh", repeat(ASTRAL, 65)));
                // A user's categories are any of 1..64 code points (§10); a rule's follow the
                // channel pattern (§3).
                boolean fine =
                        anyCategory
                                && !name.isEmpty()
                                && name.codePointCount(0, name.length()) <= 64;
                nameValidity = fine ? Validity.VALID : Validity.INVALID;
            } else if (anyCategory && v.chance(0.5)) {
                name = v.one(categories);
            } else {
                name = v.channelNameText(() -> v.one(channels));
            }
            if (!seen.add(name)) {
                continue; // a key twice would be a duplicate key
            }
            Value list = limits(false, reservable, longest);
            // An empty list under a name: the contract does not say.
            Validity listValidity =
                    list.json().equals("[]")
                            ? list.validity().and(Validity.UNSETTLED)
                            : list.validity();
            Validity next = validity.and(nameValidity).and(listValidity);
            if (next != validity) {
                why =
                        nameValidity != Validity.VALID
                                ? "name " + name
                                : name + (list.why() == null ? "" : "." + list.why());
            }
            validity = next;
            b.append(seen.size() > 1 ? "," : "").append(quote(name, v.chance(0.2))).append(':');
            b.append(list.json());
        }
        return new Value(b.append('}').toString(), validity, why);
    }

    /** A rule (or shadow rule): its parts, its hold put in once the config's longest is known. */
    record RuleParts(Obj obj, Longest longest, boolean wantsHold) {}

    RuleParts rule(Value segment, boolean forceDeep, boolean shadow) {
        Obj o = new Obj();
        Longest longest = new Longest();
        o.put("segment", segment);
        o.put("limits", limits(true, true, longest));
        if (v.chance(0.3)) {
            o.put("channels", named(true, false, longest));
        }
        if (v.chance(0.2)) {
            o.put("categories", named(true, false, longest));
        }
        if (forceDeep || v.chance(0.3)) {
            o.put("campaigns", limits(false, true, longest));
        }
        if (v.chance(0.25)) {
            o.put("campaign", campaignLimits(longest));
        }
        if (forceDeep || v.chance(0.4)) {
            o.put("quietHours", quietHours());
        }
        if (forceDeep || v.chance(0.3)) {
            o.put(
                    "preempt",
                    v.pick(
                            () -> Value.valid("true"),
                            List.of(
                                    Value.valid("true"),
                                    Value.valid("false"),
                                    Value.valid("null"),
                                    Value.ABSENT),
                            invalid("\"true\"", "1", "[]")));
        }
        if (v.chance(coherent ? 0.5 : 0.3)) {
            o.put("fatigue", fatigue());
        }
        return new RuleParts(o, longest, forceDeep || v.chance(0.5));
    }

    /** A rule's {@code fatigue} (§3): after 1..1,000, scale 0.01..0.99, floor, window. */
    Value fatigue() {
        if (v.chance(v.breakShare() / 3)) {
            return v.one(
                    List.of(
                            Value.valid("null"),
                            Value.invalid("[]"),
                            Value.invalid("\"after 5\""),
                            Value.invalid("true"),
                            Value.invalid("{}")));
        }
        Obj o = new Obj();
        o.put(
                "after",
                v.pick(
                        () -> num(1 + r.nextInt(5)),
                        List.of(num(1), num(1_000)),
                        join(
                                List.of(
                                        Value.invalid("0"),
                                        Value.invalid("1001"),
                                        Value.invalid("-1"),
                                        Value.invalid("null"),
                                        Value.MISSING),
                                EdgeValues.notIntegers())));
        o.put(
                "scale",
                v.pick(
                        () -> Value.valid(v.one(List.of("0.5", "0.25", "0.75", "0.3"))),
                        List.of(
                                Value.valid("0.01"),
                                Value.valid("0.99"),
                                Value.valid("0.50"),
                                Value.valid("5e-1"),
                                Value.valid("0.29"),
                                Value.valid("0.58")),
                        List.of(
                                Value.invalid("0"),
                                Value.invalid("1"),
                                Value.invalid("0.0"),
                                Value.invalid("1.0"),
                                Value.invalid("0.001"),
                                Value.invalid("0.999"),
                                Value.invalid("0.125"),
                                Value.invalid("-0.5"),
                                Value.invalid("1e400"),
                                Value.invalid("-1e400"),
                                Value.invalid("\"0.5\""),
                                Value.invalid("null"),
                                Value.invalid("[]"),
                                Value.MISSING)));
        o.put(
                "floor",
                v.pick(
                        () -> num(r.nextInt(3)),
                        List.of(num(0), num(1_000_000)),
                        join(
                                List.of(
                                        Value.invalid("-1"),
                                        Value.invalid("1000001"),
                                        Value.invalid("2147483648"),
                                        Value.MISSING),
                                EdgeValues.notIntegers())));
        if (v.chance(v.breakShare() / 4)) {
            o.put("window", Value.MISSING);
        } else {
            o.put("window", v.window(() -> v.one(List.of("1d", "7d", "30d", "2h"))).value());
        }
        return o.value(r);
    }

    Value quietHours() {
        if (v.chance(v.breakShare() / 3)) {
            return v.one(invalid("[]", "\"21:00-08:00\"", "{}"));
        }
        Obj o = new Obj();
        Value from = v.localTime(() -> v.one(List.of("21:00", "22:00", "20:30")));
        Value to = v.localTime(() -> v.one(List.of("08:00", "07:30", "06:00")));
        o.put("from", from);
        o.put("to", to);
        if (from.json() != null && from.json().equals(to.json())) {
            o.and(Validity.INVALID, "from equals to"); // no span
        }
        if (v.chance(0.3)) {
            if (v.chance(v.breakShare())) {
                o.put(
                        "channels",
                        v.one(
                                List.of(
                                        Value.invalid("[\"Push\"]"),
                                        Value.invalid("\"push\""),
                                        Value.unsettled("[]"))));
            } else {
                o.put("channels", Value.valid("[\"push\",\"sms\"]"));
            }
        }
        return o.value(r);
    }

    /** A hold (§3) against the longest window of the config: up to it, or past it. */
    Value hold(long longest, long orAlso) {
        if (v.chance(v.breakShare())) {
            long past = longest / 1000 + 1;
            return v.one(
                    List.of(
                            past > 90 * 86_400
                                    ? Value.invalid("\"91d\"")
                                    : orAlso / 1000 >= past
                                            ? Value.unsettled(quote(past + "s", false))
                                            : Value.invalid(quote(past + "s", false)),
                            Value.invalid("\"0s\""),
                            Value.invalid("\"91d\""),
                            Value.invalid("12"),
                            Value.invalid("\"12 h\"")));
        }
        if (longest <= 0) {
            return Value.ABSENT;
        }
        List<String> fits = new ArrayList<>();
        for (String w : List.of("1s", "1m", "1h", "12h", "1d", "3d", "7d")) {
            if (EdgeValues.windowMillis(w) <= longest) {
                fits.add(w);
            }
        }
        fits.add(longest / 1000 + "s"); // exactly the longest
        if (v.chance(v.edgeShare())) {
            return str(fits.get(fits.size() - 1));
        }
        return str(v.one(fits));
    }

    /** A segment id (§3, §4: 1..64 code points), or now and then one the contract refuses. */
    Value segmentName() {
        return v.chance(v.breakShare() / 2) ? brokenSegmentName() : v.text(v.one(segments));
    }

    Value brokenSegmentName() {
        return v.one(
                List.of(
                        Value.invalid("\"\""),
                        Value.invalid(quote(repeat(ASTRAL, 65), false)),
                        Value.invalid("1"),
                        Value.MISSING));
    }

    /** Rules with exactly one {@code *}, or sometimes none or two. */
    Value rules(boolean forceDeep, boolean shadow, Longest longestOut, long rulesLongest) {
        int n;
        Validity validity = Validity.VALID;
        String why = null;
        if (!coherent && v.chance(0.01)) {
            n = v.chance(0.7) ? 1000 : 1001;
        } else {
            n = 1 + r.nextInt(3);
        }
        if (n > 1000) {
            validity = Validity.INVALID;
            why = n + " rules";
        }
        int star = r.nextInt(Math.min(n, 3));
        boolean noStar = v.chance(v.breakShare() / 4);
        boolean twoStars = !noStar && n > 1 && v.chance(v.breakShare() / 4);
        if (noStar || twoStars) {
            validity = Validity.INVALID;
            why = noStar ? "no *" : "two *";
        }
        List<RuleParts> parts = new ArrayList<>();
        java.util.Set<String> names = new java.util.HashSet<>();
        for (int i = 0; i < n; i++) {
            boolean isStar = (i == star && !noStar) || (twoStars && i == (star + 1) % n);
            Value seg;
            if (isStar) {
                seg = str("*");
            } else if (n > 3) {
                seg = str("s" + i);
            } else if (v.chance(v.breakShare() / 2)) {
                seg = brokenSegmentName();
            } else {
                String name = v.one(segments);
                // The same segment twice is refused: keep them distinct (as text: the same name
                // spelled with escapes or without is the same name).
                seg = names.add(name) ? v.text(name) : str("s" + i);
            }
            RuleParts p =
                    n > 3
                            ? new RuleParts(
                                    new Obj()
                                            .put("segment", seg)
                                            .put(
                                                    "limits",
                                                    Value.valid("[{\"window\":\"1d\",\"max\":1}]")),
                                    longestOf(DAY),
                                    false)
                            : rule(seg, forceDeep && isStar, shadow);
            parts.add(p);
            longestOut.millis = Math.max(longestOut.millis, p.longest().millis);
        }
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < parts.size(); i++) {
            RuleParts p = parts.get(i);
            if (p.wantsHold()) {
                long allowed = shadow ? rulesLongest : longestOut.millis;
                long orAlso = shadow ? Math.max(rulesLongest, longestOut.millis) : allowed;
                p.obj().put("hold", hold(allowed, orAlso));
            }
            Value rule = p.obj().value(r);
            if (validity.and(rule.validity()) != validity) {
                why = "[" + i + "]" + (rule.why() == null ? "" : "." + rule.why());
            }
            validity = validity.and(rule.validity());
            b.append(i > 0 ? "," : "").append(rule.json());
        }
        return new Value(b.append(']').toString(), validity, why);
    }

    private static Longest longestOf(long millis) {
        Longest l = new Longest();
        l.millis = millis;
        return l;
    }

    /**
     * Whether the config being written has only short rolling windows (hours): its histories are
     * kept for hours, so that a message stamped most of a day ahead (within {@code --max-future})
     * outruns them.
     */
    private boolean shortWindows;

    /** A limit config; {@code forceDeep}: the {@code *} rule holds, is quiet and preempts. */
    Value config(long version, boolean forceDeep) {
        shortWindows = coherent && v.chance(0.3);
        Obj o = new Obj();
        o.put("version", v.version(() -> version));
        Longest longest = new Longest();
        o.put("rules", rules(forceDeep, false, longest, 0));
        o.put("timezone", v.zone(() -> zone));
        if (v.chance(0.6)) {
            o.put(
                    "exempt",
                    v.pick(
                            () -> Value.valid("[\"transactional\"]"),
                            List.of(
                                    Value.valid("[]"),
                                    Value.valid("null"),
                                    Value.valid(
                                            "[\"transactional\","
                                                    + quote(repeat(ASTRAL, 64), false)
                                                    + "]")),
                            invalid("\"transactional\"", "[1]", "{}")));
        }
        if (forceDeep || v.chance(0.4)) {
            o.put(
                    "maxHeld",
                    v.pick(
                            () -> num(1 + r.nextInt(4)),
                            List.of(num(1), num(2), num(100), num(10_000), Value.valid("null")),
                            join(invalid("0", "10001", "-1"), EdgeValues.notIntegers())));
        }
        if (v.chance(0.25)) {
            Longest shadowLongest = new Longest();
            if (v.chance(v.breakShare() / 2)) {
                o.put("shadow", v.one(invalid("[]", "{\"rules\":[]}", "{}")));
            } else {
                Value rules = rules(false, true, shadowLongest, longest.millis);
                o.put(
                        "shadow",
                        new Value(
                                "{\"rules\":" + rules.json() + "}",
                                rules.validity(),
                                rules.why() == null ? null : "rules" + rules.why()));
            }
        }
        return o.value(r);
    }

    private static List<Value> join(List<Value> a, List<Value> b) {
        return EdgeValues.join(a, b);
    }

    /** The config topic's next record: a config of the next version, mostly. */
    EdgeInput configRecord() {
        // The next version mostly; the one in force or 1 sometimes (valid, but stale).
        long version = v.chance(0.8) ? ++configVersion : v.one(List.of(configVersion, 1L));
        Value c = config(version, coherent && v.chance(0.7));
        if (!coherent && v.chance(0.1)) {
            return structural(Topic.CONFIG, null, c.json(), c.validity(), c.why(), false);
        }
        return EdgeInput.of(Topic.CONFIG, null, c.json(), c.validity(), c.why());
    }

    // ---- commands (§7)

    EdgeInput command() {
        int pick = r.nextInt(10);
        Obj o = new Obj();
        switch (pick) {
            case 0, 1, 2 -> {
                o.put("command", str("forget-user"));
                o.put("userId", v.userId(this::user));
            }
            case 3, 4, 5, 6 -> {
                // §7: a campaign's, a user's, or one message of a user; a field given as null is
                // not given; at least one of campaignId and userId; messageId only with userId.
                o.put("command", str("cancel-held"));
                Value campaign = v.chance(0.7) ? campaign() : Value.ABSENT;
                o.put("campaignId", campaign);
                boolean byCampaign = !campaign.absent() && !campaign.json().equals("null");
                boolean byUser = false;
                if (v.chance(byCampaign ? 0.4 : 0.9)) {
                    Value u = v.userId(this::user);
                    if (u.json() == null) {
                        u = Value.ABSENT; // missing: optional here
                    } else if (u.json().equals("null")) {
                        u = Value.valid("null");
                    }
                    byUser = !u.absent() && !u.json().equals("null");
                    o.put("userId", u);
                }
                if (v.chance(0.3)) {
                    Value id = v.codePoints(128, this::recentMessageId, false);
                    o.put("messageId", id);
                    if (!byUser && !id.absent() && !id.json().equals("null")) {
                        o.and(Validity.INVALID, "messageId without userId");
                    }
                }
                if (!byCampaign && !byUser) {
                    o.and(Validity.INVALID, "neither campaignId nor userId");
                }
            }
            case 7 -> o.put("command", str("rebuild-mirror"));
            case 8 -> o.put("command", v.one(invalid("\"forget-all\"", "42", "null", "\"\"")));
            default -> {
                o.put("command", str("forget-user"));
                o.put("userId", num(user()));
            }
        }
        String json = o.json(r);
        if (lifetimes != null && lifetimes.nextInt(6) == 0) {
            return endCampaign();
        }
        return EdgeInput.of(Topic.CONFIG, null, json, o.validity(), o.why());
    }

    /** {@code end-campaign} (§7): a campaign's id at its edges, or none (INVALID_CONTROL). */
    EdgeInput endCampaign() {
        int k = lifetimes.nextInt(10);
        String id;
        Validity validity = Validity.VALID;
        if (k < 6) {
            id = campaignJson.get(lifetimes.nextInt(campaignJson.size()));
        } else {
            id = List.of("null", "\"\"", quote(repeat("c", 129), false), "1.5").get(k - 6);
            validity = Validity.INVALID;
        }
        String json = "{\"command\":\"end-campaign\",\"campaignId\":" + id + "}";
        if (k == 6 && lifetimes.nextBoolean()) {
            json = "{\"command\":\"end-campaign\"}";
        }
        return EdgeInput.of(
                Topic.CONFIG,
                null,
                json,
                validity,
                validity == Validity.VALID ? null : "campaignId");
    }

    // ---- segment updates (§4)

    EdgeInput segmentUpdate() {
        Obj o = new Obj();
        Value id = segmentName();
        o.put("segmentId", id);
        String idText = id.json() == null ? "?" : id.json();
        long next = segmentVersions.merge(idText, 1L, Long::sum);
        o.put("version", v.version(() -> v.chance(0.9) ? next : Math.max(1, next - 1)));
        int pick = r.nextInt(10);
        if (pick < 4) {
            o.put("op", str(pick < 3 ? "add" : "remove"));
            o.put("userIds", userIds());
        } else if (pick == 4) {
            o.put("op", str("delete"));
        } else if (pick == 5 && v.chance(v.breakShare() * 2)) {
            o.put("op", v.one(invalid("\"Add\"", "\"\"", "1")));
        } else {
            fullLoad(o);
        }
        return EdgeInput.of(Topic.SEGMENTS, null, o.json(r), o.validity(), o.why());
    }

    Value userIds() {
        if (v.chance(v.breakShare())) {
            return v.one(
                    List.of(
                            Value.invalid("[-1]"),
                            Value.invalid("[1.5]"),
                            Value.invalid("[\"1\"]"),
                            Value.invalid("1"),
                            Value.MISSING,
                            Value.invalid("[9223372036854775808]")));
        }
        StringBuilder b = new StringBuilder("[");
        int n = r.nextInt(4);
        for (int i = 0; i < n; i++) {
            long id =
                    v.chance(v.edgeShare() / 2)
                            ? v.one(List.of(0L, Long.MAX_VALUE, 0xFFFF_FFFFL, 1L << 32))
                            : user();
            b.append(i > 0 ? "," : "").append(id);
        }
        return Value.valid(b.append(']').toString());
    }

    /** A full load: an inline bitmap of some users, or a uri no file is at. */
    void fullLoad(Obj o) {
        if (v.chance(0.5)) {
            o.put(
                    "priority",
                    v.pick(
                            () -> num(r.nextInt(40)),
                            List.of(
                                    num(0),
                                    num(-1),
                                    num(Integer.MAX_VALUE),
                                    num(Integer.MIN_VALUE),
                                    Value.valid("null")),
                            List.of(
                                    Value.unsettled("2147483648"),
                                    Value.invalid("\"10\""),
                                    Value.invalid("1.5"))));
        }
        long[] ids = new long[r.nextInt(4)];
        boolean small = true;
        for (int i = 0; i < ids.length; i++) {
            ids[i] =
                    v.chance(v.edgeShare() / 2)
                            ? v.one(List.of(0L, 0xFFFF_FFFFL, 1L << 32, Long.MAX_VALUE))
                            : user();
            small &= ids[i] < (1L << 32);
        }
        SegmentBitmap bitmap = SegmentBitmap.of(ids);
        SegmentBitmap.Format format =
                small && v.chance(0.5)
                        ? SegmentBitmap.Format.ROARING32
                        : SegmentBitmap.Format.ROARING64;
        o.put(
                "format",
                v.pick(
                        () -> str(format.wireName),
                        List.of(),
                        List.of(Value.invalid("\"roaring\""), Value.invalid("32"), Value.MISSING)));
        byte[] bytes = bitmap.write(format);
        int pick = r.nextInt(10);
        if (pick == 0) {
            o.put("uri", str("file:///nonexistent/freqcap/" + r.nextInt(100) + ".roaring"));
            o.and(Validity.INVALID, "uri"); // unreadable
        } else if (pick == 1 && v.chance(v.breakShare() * 3)) {
            byte[] bad =
                    switch (r.nextInt(3)) {
                        case 0 -> Arrays.copyOf(bytes, Math.max(0, bytes.length - 1));
                        case 1 -> Arrays.copyOf(bytes, bytes.length + 1);
                        default -> {
                            byte[] noise = new byte[1 + r.nextInt(40)];
                            r.nextBytes(noise);
                            yield noise;
                        }
                    };
            o.put("bitmap", str(Base64.getEncoder().encodeToString(bad)));
            o.and(Validity.INVALID, "bitmap"); // a corrupt bitmap
        } else if (pick == 2 && v.chance(v.breakShare() * 3)) {
            o.put("bitmap", v.one(invalid("\"not base64!\"", "42")));
        } else {
            o.put("bitmap", str(Base64.getEncoder().encodeToString(bytes)));
        }
    }

    // ---- preferences (§10)

    EdgeInput preference() {
        long user = user();
        String key = Long.toString(user);
        Validity keyValidity = Validity.VALID;
        int keyPick = r.nextInt(20);
        if (keyPick == 0) {
            key = null;
        } else if (keyPick == 1 && !coherent) {
            key = v.one(List.of("abc", "", "-1", "9223372036854775808"));
            keyValidity = Validity.INVALID;
        } else if (keyPick == 2) {
            key = Long.toString(user == 0 ? 1 : user - 1); // another user's key
            keyValidity = Validity.INVALID;
        }
        if (v.chance(0.08)) {
            // A tombstone clears the preferences of the user its key names; without a key, or
            // with one that is no userId, it names no one.
            return tombstone(key);
        }
        Obj o = new Obj();
        Value userId = v.userId(() -> user);
        if (key != null && userId.validity() == Validity.VALID) {
            // The value's userId must be the key's (§10): the same decimal text.
            keyValidity = key.equals(userId.json()) ? Validity.VALID : Validity.INVALID;
        }
        o.put("userId", userId);
        long next = preferenceVersions.merge(user, 1L, Long::sum);
        o.put("version", v.version(() -> v.chance(0.85) ? next : Math.max(1, next - 1)));
        if (v.chance(0.5)) {
            o.put("optOut", optOut());
        }
        if (v.chance(0.4)) {
            o.put("pausedUntil", pausedUntil());
        }
        Longest unused = new Longest();
        if (v.chance(0.3)) {
            o.put("limits", v.chance(0.1) ? Value.valid("null") : limits(false, false, unused));
        }
        if (v.chance(0.2)) {
            o.put("channels", named(false, false, unused));
        }
        if (v.chance(0.2)) {
            o.put("categories", named(false, true, unused));
        }
        o.and(keyValidity, "key");
        if (!coherent && v.chance(0.08)) {
            return structural(Topic.PREFERENCES, key, o.json(r), o.validity(), o.why(), true);
        }
        return EdgeInput.of(Topic.PREFERENCES, key, o.json(r), o.validity(), o.why());
    }

    /** A preferences tombstone: it clears the preferences of the user its key names (§1, §10). */
    static EdgeInput tombstone(String key) {
        boolean names = key != null && key.matches("0|[1-9][0-9]{0,18}") && fitsLong(key);
        return new EdgeInput(
                Topic.PREFERENCES,
                EdgeInput.bytes(key),
                null,
                names ? Validity.VALID : Validity.INVALID,
                names ? null : "a tombstone whose key names no user");
    }

    private static boolean fitsLong(String digits) {
        try {
            Long.parseLong(digits);
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    Value optOut() {
        if (v.chance(v.breakShare() / 2)) {
            return v.one(
                    invalid("[]", "\"sms\"", "{\"channels\":\"sms\"}", "{\"channels\":[\"SMS\"]}"));
        }
        Obj o = new Obj();
        if (v.chance(0.7)) {
            o.put(
                    "channels",
                    Value.valid(
                            "[" + quote(v.channelNameText(() -> v.one(channels)), false) + "]"));
        }
        if (v.chance(0.5)) {
            // Any category a message may carry (§2: 1..64 code points), says §10.
            Value c = v.codePoints(64, () -> v.one(categories), true);
            o.put("categories", new Value("[" + c.json() + "]", c.validity(), "[0]"));
        }
        return o.value(r);
    }

    long clockHint;

    Value pausedUntil() {
        return v.pick(
                () -> num(sat(clockHint + r.nextInt((int) (3 * DAY)) - HOUR)),
                List.of(
                        num(0),
                        num(1),
                        num(YEAR_10000 - 1),
                        num(YEAR_10000),
                        num(YEAR_10000 + 1),
                        num(Long.MAX_VALUE - 1),
                        num(Long.MAX_VALUE),
                        Value.valid("null"),
                        num(sat(clockHint + 3 * HOUR))),
                join(
                        List.of(Value.invalid("-1"), Value.invalid(Long.toString(Long.MIN_VALUE))),
                        EdgeValues.notIntegers()));
    }

    // ---- receipts (§11)

    /** One of the last messageIds, mostly: a receipt follows its message closely. */
    String recentMessageId() {
        if (messageIds.isEmpty()) {
            return "m-0";
        }
        int n = messageIds.size();
        return v.chance(0.7)
                ? messageIds.get(Math.max(0, n - 1 - r.nextInt(Math.min(n, 4))))
                : v.one(messageIds);
    }

    EdgeInput receipt() {
        Obj o = new Obj();
        o.put("messageId", v.codePoints(128, this::recentMessageId, true));
        long user = user();
        o.put("userId", v.userId(() -> user));
        o.put(
                "status",
                v.pick(
                        () ->
                                str(
                                        v.one(
                                                List.of(
                                                        "failed",
                                                        "failed",
                                                        "delivered",
                                                        "opened",
                                                        "clicked",
                                                        "bounced-soft"))),
                        List.of(str("failed"), v.text(repeat(ASTRAL, 64)), str("x")),
                        join(
                                List.of(
                                        Value.invalid("\"\""),
                                        Value.invalid(quote(repeat(ASTRAL, 65), false)),
                                        Value.invalid("null"),
                                        Value.MISSING),
                                EdgeValues.notStrings())));
        o.put("timestamp", v.epochMillis(() -> sat(clockHint), false));
        String key = v.chance(0.3) ? Long.toString(user) : null;
        if (!coherent && v.chance(0.08)) {
            return structural(Topic.RECEIPTS, key, o.json(r), o.validity(), o.why(), true);
        }
        return EdgeInput.of(Topic.RECEIPTS, key, o.json(r), o.validity(), o.why());
    }
}
