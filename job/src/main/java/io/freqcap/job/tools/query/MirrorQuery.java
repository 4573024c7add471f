package io.freqcap.job.tools.query;

import io.freqcap.job.KafkaClientConfig;
import io.freqcap.operators.mirror.RedisConnection;
import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.mirror.MirrorLog;
import io.freqcap.schema.mirror.MirrorWrite;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.TemporalAdjusters;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * {@code freqcap-query}: what the Redis mirror holds for one user (contract.md §7), read with the
 * same layout any other service would use. Prints the counted messages per window (the rolling
 * windows of {@code --limits}, else 1d and 7d) and channel, counted in the window that ends at the
 * user's latest counted message; per calendar period of {@code --limits} (day, week, month), those
 * in the period holding the latest message in {@code --timezone} (else the config's zone: Redis
 * keeps timestamps, not each message's zone); then the messages themselves.
 */
public final class MirrorQuery {
    private MirrorQuery() {}

    static final String USAGE =
            "usage: freqcap-query --redis URI [--redis-password-file FILE] --user USERID"
                    + " [--redis-key-prefix fc] [--limits FILE] [--timezone ZONE]\n"
                    + "       [--bootstrap-servers HOST:PORT --preferences-topic TOPIC"
                    + " [--kafka-config FILE]]\n"
                    + "   or: freqcap-query --held --bootstrap-servers HOST:PORT"
                    + " [--held-topic held-messages] [--user USERID] [--campaign CAMPAIGN]"
                    + " [--json]";

    public static void main(String[] args) throws Exception {
        if (java.util.Arrays.asList(args).contains("--held")) {
            HeldQuery.main(args); // what waits, from the held topic (contract.md §12)
            return;
        }
        Map<String, String> opts = new TreeMap<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--help")) {
                System.out.println(USAGE);
                return;
            }
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                System.err.println("freqcap-query: bad argument " + args[i] + "\n" + USAGE);
                System.exit(2);
            }
            opts.put(args[i].substring(2), args[++i]);
        }
        if (!opts.containsKey("redis") || !opts.containsKey("user")) {
            System.err.println("freqcap-query: --redis and --user are required\n" + USAGE);
            System.exit(2);
        }
        long user;
        Map<Long, String> windows = new TreeMap<>(Map.of(86_400_000L, "1d", 604_800_000L, "7d"));
        Set<String> periods = Set.of();
        ZoneId zone = ZoneOffset.UTC;
        try {
            user = Long.parseLong(opts.get("user"));
            RedisConnection.parse(opts.get("redis"));
            if (opts.containsKey("limits")) {
                LimitConfig config =
                        LimitConfig.parse(Files.readString(Path.of(opts.get("limits"))));
                windows = windowsOf(config);
                periods = periodsOf(config);
                zone = ZoneId.of(config.timezone());
            }
            if (opts.containsKey("timezone")) {
                zone = ZoneId.of(opts.get("timezone"));
            }
        } catch (Exception e) {
            System.err.println("freqcap-query: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (opts.containsKey("preferences-topic")) {
            printPreferences(opts, user, System.out);
        }
        try (RedisSync redis = RedisSync.open(opts.get("redis"), opts.get("redis-password-file"))) {
            print(
                    redis.commands(),
                    opts.getOrDefault("redis-key-prefix", "fc"),
                    user,
                    windows,
                    periods,
                    zone,
                    System.out);
        }
    }

    /**
     * The user's preferences in force, read from the preferences topic (they live in the job's
     * state, not in Redis), before what Redis counts.
     */
    static void printPreferences(Map<String, String> opts, long user, PrintStream out)
            throws Exception {
        if (!opts.containsKey("bootstrap-servers")) {
            System.err.println("freqcap-query: --preferences-topic needs --bootstrap-servers");
            System.exit(2);
        }
        java.util.Properties p = new java.util.Properties();
        if (opts.containsKey("kafka-config")) {
            p.putAll(KafkaClientConfig.read(Path.of(opts.get("kafka-config"))));
        }
        p.put("bootstrap.servers", opts.get("bootstrap-servers"));
        String topic = opts.get("preferences-topic");
        PreferenceLookup.Found f = PreferenceLookup.read(p, topic, user);
        out.println(
                f.preferences() == null
                        ? "user " + user + ": no preferences in " + topic
                        : "user " + user + ": preferences in force (" + topic + "): " + f.json());
    }

    /** Every rolling window of the config, shortest first, with its text ("1d"). */
    static Map<Long, String> windowsOf(LimitConfig config) {
        Map<Long, String> w = new TreeMap<>();
        for (Limit l : limitsOf(config)) {
            if (!l.isCalendar()) {
                w.put(l.windowMillis(), l.window());
            }
        }
        return w;
    }

    /** The calendar periods the config's limits use, day before week before month. */
    static Set<String> periodsOf(LimitConfig config) {
        Set<String> used = new TreeSet<>(Comparator.comparingInt(PERIODS::indexOf));
        for (Limit l : limitsOf(config)) {
            if (l.isCalendar()) {
                used.add(l.calendar());
            }
        }
        return used;
    }

    private static final List<String> PERIODS = List.of("day", "week", "month");

    private static List<Limit> limitsOf(LimitConfig config) {
        List<Limit> all = new ArrayList<>();
        for (Rule r : config.rules().values()) {
            all.addAll(r.caps().all());
            r.caps().channels().values().forEach(all::addAll);
            r.caps().categories().values().forEach(all::addAll);
            all.addAll(r.caps().campaign());
        }
        return all;
    }

    /** Prints the report of one user. */
    static void print(
            RedisClusterCommands<String, String> redis,
            String prefix,
            long user,
            Map<Long, String> windows,
            Set<String> periods,
            ZoneId zone,
            PrintStream out) {
        String userKey = MirrorWrite.userKey(prefix, user);
        String value = redis.get(userKey);
        if (value == null) {
            out.println("user " + user + ": no counted messages in Redis (" + userKey + ")");
            return;
        }
        List<MirrorLog.Entry> all = MirrorLog.decode(value.getBytes(StandardCharsets.UTF_8));
        if (all.isEmpty()) {
            out.println("user " + user + ": no counted messages in Redis (" + userKey + ")");
            return;
        }
        Map<String, List<MirrorLog.Entry>> byChannel = new TreeMap<>();
        for (MirrorLog.Entry e : all) {
            byChannel.computeIfAbsent(e.channel(), c -> new ArrayList<>()).add(e);
        }
        long latest = all.get(all.size() - 1).score();
        out.println(
                "user "
                        + user
                        + ": "
                        + all.size()
                        + " counted messages in Redis ("
                        + userKey
                        + "), latest at "
                        + Instant.ofEpochMilli(latest));
        for (Map.Entry<Long, String> window : windows.entrySet()) {
            long w = window.getKey();
            StringBuilder line =
                    new StringBuilder("  window ")
                            .append(window.getValue())
                            .append(" up to the latest: all ")
                            .append(countIn(all, latest, w));
            byChannel.forEach(
                    (ch, members) ->
                            line.append(", ")
                                    .append(ch)
                                    .append(' ')
                                    .append(countIn(members, latest, w)));
            out.println(line);
        }
        for (String period : periods) {
            LocalDate day = LocalDate.ofInstant(Instant.ofEpochMilli(latest), zone);
            Object mine = period(period, day);
            StringBuilder line =
                    new StringBuilder("  calendar ")
                            .append(period)
                            .append(" of the latest (")
                            .append(mine)
                            .append(" in ")
                            .append(zone)
                            .append("): all ")
                            .append(countInPeriod(all, period, mine, zone));
            byChannel.forEach(
                    (ch, members) ->
                            line.append(", ")
                                    .append(ch)
                                    .append(' ')
                                    .append(countInPeriod(members, period, mine, zone)));
            out.println(line);
        }
        out.println("  messages:");
        for (MirrorLog.Entry m : all) {
            out.println(
                    "    "
                            + Instant.ofEpochMilli(m.score())
                            + "  "
                            + m.channel()
                            + "  "
                            + m.messageId());
        }
    }

    /**
     * The period of {@code period} holding {@code day}: a date, the Monday of its week, a month.
     */
    private static Object period(String period, LocalDate day) {
        return switch (period) {
            case "day" -> day;
            case "week" -> day.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
            default -> YearMonth.from(day);
        };
    }

    private static long countInPeriod(
            List<MirrorLog.Entry> members, String period, Object mine, ZoneId zone) {
        return members.stream()
                .filter(
                        m ->
                                period(
                                                period,
                                                LocalDate.ofInstant(
                                                        Instant.ofEpochMilli(m.score()), zone))
                                        .equals(mine))
                .count();
    }

    /** Members in the half-open window (latest - w, latest]. */
    private static long countIn(List<MirrorLog.Entry> members, long latest, long w) {
        return members.stream().filter(m -> m.score() > latest - w && m.score() <= latest).count();
    }
}
