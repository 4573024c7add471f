package io.freqcap.job.tools.simulate;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.operators.backtest.LongMap;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.message.OutboundMessage;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one config decided over a backtest's input: decisions by kind, segment, channel, category
 * and campaign; users capped (at least one REJECTED); deliveries (ALLOWED and EXEMPT) per user per
 * UTC day of their send time; held messages and how long they were held; held messages preempted,
 * by their priority and campaign.
 */
final class SimulationSummary {
    static final Decision[] KINDS = {
        Decision.ALLOWED,
        Decision.EXEMPT,
        Decision.REJECTED,
        Decision.DUPLICATE,
        Decision.STALE,
        Decision.MALFORMED,
        Decision.PREEMPTED
    };
    private static final long DAY = 86_400_000L;

    final long configVersion;
    private final long[] total = new long[Decision.values().length];
    private final Map<String, long[]> bySegment = new TreeMap<>();
    private final Map<String, long[]> byChannel = new TreeMap<>();
    private final Map<String, long[]> byCategory = new TreeMap<>();
    private final Map<String, long[]> byCampaign = new HashMap<>();
    // every user with a well-formed record: whether capped (at least one REJECTED)
    private final LongMap<Boolean> users = new LongMap<>(1 << 16);
    private int capped;
    private long shadowRejected;
    private long fatigued;
    // held messages preempted, by their priority
    private final Map<Integer, Long> preemptedByPriority = new TreeMap<>();
    // (user, UTC day) of every delivery, packed, counted up at the end
    private long[] userDays = new long[1024];
    private int deliveries;
    // send time minus timestamp of every held message
    private long[] delays = new long[64];
    private int held;

    SimulationSummary(long configVersion) {
        this.configVersion = configVersion;
    }

    /** Counts one record's outcome. */
    void add(Decided decided) {
        Decision d = decided.decision();
        int k = d.ordinal();
        if (d == Decision.MALFORMED) {
            total[k]++;
            return;
        }
        OutboundMessage m = decided.message();
        String segment = decided.segment();
        Long sendAt = decided.verdict().sendAt();
        total[k]++;
        row(bySegment, segment)[k]++;
        row(byChannel, m.channel())[k]++;
        row(byCategory, m.category())[k]++;
        if (m.campaignId() != null) {
            row(byCampaign, m.campaignId())[k]++;
        }
        Boolean wasCapped = users.get(m.userId());
        if (wasCapped == null || (!wasCapped && d == Decision.REJECTED)) {
            users.put(m.userId(), d == Decision.REJECTED);
            capped += d == Decision.REJECTED ? 1 : 0;
        }
        if (decided.shadowRejects()) {
            shadowRejected++;
        }
        if (decided.verdict().lowered()) {
            fatigued++;
        }
        if (d.delivered()) {
            if (deliveries == userDays.length) {
                userDays = Arrays.copyOf(userDays, deliveries * 2);
            }
            long sent = sendAt == null ? m.timestamp() : sendAt;
            userDays[deliveries++] = userDay(m.userId(), Math.floorDiv(sent, DAY));
        }
        if (d == Decision.PREEMPTED) {
            preemptedByPriority.merge(m.priority(), 1L, Long::sum);
        }
        if (sendAt != null && d.delivered()) {
            if (held == delays.length) {
                delays = Arrays.copyOf(delays, held * 2);
            }
            delays[held++] = sendAt - m.timestamp();
        }
    }

    long held() {
        return held;
    }

    /** The q-quantile (0..1) of held messages' delays, in milliseconds; 0 when none was held. */
    long heldDelay(double q) {
        if (held == 0) {
            return 0;
        }
        long[] sorted = Arrays.copyOf(delays, held);
        Arrays.sort(sorted);
        return sorted[(int) Math.min(held - 1, Math.max(0, Math.ceil(q * held) - 1))];
    }

    /** {@code 9h 30m}, {@code 45m}, {@code 12s}. */
    static String duration(long millis) {
        long s = millis / 1000;
        if (s < 60) {
            return s + "s";
        }
        long m = s / 60;
        return m < 60 ? m + "m" : m / 60 + "h" + (m % 60 == 0 ? "" : " " + m % 60 + "m");
    }

    /**
     * One key per (user, day): exact for userIds below 2^40 and days after 1970; other pairs get a
     * hash of their own key space (two of them colliding would merge two cells of the
     * distribution).
     */
    static long userDay(long user, long day) {
        if (user < (1L << 40) && day >= 0 && day < (1L << 23)) {
            return (user << 23) | day;
        }
        long h = user * 0x9E3779B97F4A7C15L + day * 0xC2B2AE3D27D4EB4FL;
        return (h ^ (h >>> 31)) | Long.MIN_VALUE;
    }

    private static long[] row(Map<String, long[]> rows, String key) {
        long[] r = rows.get(key);
        if (r == null) {
            r = new long[Decision.values().length];
            rows.put(key, r);
        }
        return r;
    }

    long count(Decision d) {
        return total[d.ordinal()];
    }

    long records() {
        long n = 0;
        for (long c : total) {
            n += c;
        }
        return n;
    }

    long delivered() {
        return count(Decision.ALLOWED) + count(Decision.EXEMPT);
    }

    int capped() {
        return capped;
    }

    /** Whether {@code user} had a REJECTED message. */
    boolean isCapped(long user) {
        return Boolean.TRUE.equals(users.get(user));
    }

    /** Calls {@code action} with each capped user. */
    void forEachCapped(java.util.function.LongConsumer action) {
        users.forEach(
                (user, isCapped) -> {
                    if (isCapped) {
                        action.accept(user);
                    }
                });
    }

    /** Messages decided under limits a rule's {@code fatigue} lowered (contract.md §8). */
    long fatigued() {
        return fatigued;
    }

    long shadowRejected() {
        return shadowRejected;
    }

    Map<String, long[]> bySegment() {
        return bySegment;
    }

    /** Deliveries per (user, day) with at least one: how many cells hold 1, 2, ... */
    TreeMap<Integer, Long> perUserDay() {
        long[] keys = Arrays.copyOf(userDays, deliveries);
        Arrays.sort(keys);
        TreeMap<Integer, Long> histogram = new TreeMap<>();
        for (int i = 0; i < keys.length; ) {
            int j = i;
            while (j < keys.length && keys[j] == keys[i]) {
                j++;
            }
            histogram.merge(j - i, 1L, Long::sum);
            i = j;
        }
        return histogram;
    }

    /** The q-quantile (0..1) of deliveries per user-day with any. */
    static int quantile(TreeMap<Integer, Long> histogram, double q) {
        long cells = histogram.values().stream().mapToLong(Long::longValue).sum();
        long rank = (long) Math.ceil(q * cells);
        long seen = 0;
        for (Map.Entry<Integer, Long> e : histogram.entrySet()) {
            seen += e.getValue();
            if (seen >= rank) {
                return e.getKey();
            }
        }
        return 0;
    }

    void print(PrintStream out, String name) {
        long n = records();
        out.printf("%s: limits version %d, %,d records%n", name, configVersion, n);
        StringBuilder line = new StringBuilder("  decisions:");
        for (Decision d : KINDS) {
            line.append(String.format("  %s %,d (%s)", d, count(d), percent(count(d), n)));
        }
        out.println(line);
        out.printf(
                "  users: %,d, capped (at least one REJECTED): %,d (%s)%n",
                users.size(), capped, percent(capped, users.size()));
        if (shadowRejected > 0) {
            out.printf("  shadow rules would have rejected: %,d%n", shadowRejected);
        }
        if (fatigued > 0) {
            out.printf(
                    "  decided under a lowered cap (fatigue): %,d (%s)%n",
                    fatigued, percent(fatigued, n));
        }
        if (held > 0) {
            out.printf(
                    "  held for a later send time: %,d (%s of ALLOWED), delay p50 %s, p90 %s,"
                            + " max %s%n",
                    held,
                    percent(held, count(Decision.ALLOWED)),
                    duration(heldDelay(0.5)),
                    duration(heldDelay(0.9)),
                    duration(heldDelay(1)));
        }
        if (!preemptedByPriority.isEmpty()) {
            out.printf(
                    "  preempted (held, then their place taken): %,d; by their priority: %s;"
                            + " by campaign: %s%n",
                    count(Decision.PREEMPTED), preemptedByPriority, preemptedByCampaign());
        }
        TreeMap<Integer, Long> perDay = perUserDay();
        long cells = perDay.values().stream().mapToLong(Long::longValue).sum();
        out.printf(
                "  deliveries per user per UTC day (days with any: %,d): mean %.2f, p50 %d, p90 %d,"
                        + " p99 %d, max %d%n",
                cells,
                cells == 0 ? 0.0 : (double) delivered() / cells,
                quantile(perDay, 0.5),
                quantile(perDay, 0.9),
                quantile(perDay, 0.99),
                perDay.isEmpty() ? 0 : perDay.lastKey());
        table(out, "segment", bySegment);
        table(out, "channel", byChannel);
        table(out, "category", byCategory);
    }

    /** Preempted messages per campaign that had any ({@code -} for none), most first. */
    private Map<String, Long> preemptedByCampaign() {
        Map<String, Long> out = new java.util.LinkedHashMap<>();
        byCampaign.entrySet().stream()
                .filter(e -> e.getValue()[Decision.PREEMPTED.ordinal()] > 0)
                .sorted(
                        (x, y) ->
                                Long.compare(
                                        y.getValue()[Decision.PREEMPTED.ordinal()],
                                        x.getValue()[Decision.PREEMPTED.ordinal()]))
                .forEach(e -> out.put(e.getKey(), e.getValue()[Decision.PREEMPTED.ordinal()]));
        long without = count(Decision.PREEMPTED) - out.values().stream().mapToLong(v -> v).sum();
        if (without > 0) {
            out.put("-", without);
        }
        return out;
    }

    private static void table(PrintStream out, String title, Map<String, long[]> rows) {
        out.printf("  %-20s", "by " + title);
        for (int i = 0; i < 5; i++) {
            out.printf(" %12s", KINDS[i]);
        }
        out.println();
        for (Map.Entry<String, long[]> e : rows.entrySet()) {
            out.printf("  %-20s", e.getKey());
            for (int i = 0; i < 5; i++) {
                out.printf(" %,12d", e.getValue()[KINDS[i].ordinal()]);
            }
            out.println();
        }
    }

    static String percent(long part, long whole) {
        return whole == 0 ? "0%" : String.format("%.1f%%", 100.0 * part / whole);
    }

    ObjectNode toJson() {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("configVersion", configVersion);
        o.put("records", records());
        o.set("decisions", counts(total));
        o.put("users", users.size());
        o.put("usersCapped", capped);
        o.put("delivered", delivered());
        o.put("shadowRejected", shadowRejected);
        o.put("fatigued", fatigued);
        o.put("held", held);
        ObjectNode preempted = o.putObject("preemptedByPriority");
        preemptedByPriority.forEach((p, n) -> preempted.put(Integer.toString(p), n));
        ObjectNode delay = o.putObject("heldDelayMillis");
        delay.put("p50", heldDelay(0.5));
        delay.put("p90", heldDelay(0.9));
        delay.put("p99", heldDelay(0.99));
        delay.put("max", heldDelay(1));
        ObjectNode perDay = o.putObject("deliveriesPerUserDay");
        perUserDay().forEach((k, v) -> perDay.put(Integer.toString(k), v));
        o.set("bySegment", rows(bySegment));
        o.set("byChannel", rows(byChannel));
        o.set("byCategory", rows(byCategory));
        o.set("byCampaign", rows(new TreeMap<>(byCampaign)));
        return o;
    }

    private static ObjectNode counts(long[] row) {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        for (Decision d : KINDS) {
            o.put(d.name(), row[d.ordinal()]);
        }
        return o;
    }

    private static ObjectNode rows(Map<String, long[]> rows) {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        rows.forEach((k, v) -> o.set(k, counts(v)));
        return o;
    }
}
