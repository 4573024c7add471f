package io.freqcap.job.tools;

import io.freqcap.operators.mirror.RedisConnection;
import io.freqcap.schema.Limit;
import io.freqcap.schema.LimitConfig;
import io.freqcap.schema.MirrorWrite;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code freqcap-query}: what the Redis mirror holds for one user (contract.md §7), read with the
 * same layout any other service would use. Prints the counted messages per window (the windows of
 * {@code --limits}, else 1d and 7d) and channel, counted in the window that ends at the user's
 * latest counted message, then the messages themselves.
 */
public final class MirrorQuery {
    private MirrorQuery() {}

    static final String USAGE =
            "usage: freqcap-query --redis URI --user USERID [--redis-key-prefix fc] [--limits FILE]";

    public static void main(String[] args) throws Exception {
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
        try {
            user = Long.parseLong(opts.get("user"));
            RedisConnection.parse(opts.get("redis"));
            if (opts.containsKey("limits")) {
                windows =
                        windowsOf(LimitConfig.parse(Files.readString(Path.of(opts.get("limits")))));
            }
        } catch (Exception e) {
            System.err.println("freqcap-query: " + e.getMessage());
            System.exit(2);
            return;
        }
        try (RedisSync redis = RedisSync.open(opts.get("redis"))) {
            print(
                    redis.commands(),
                    opts.getOrDefault("redis-key-prefix", "fc"),
                    user,
                    windows,
                    System.out);
        }
    }

    /** Every window of the config, shortest first, with its text ("1d"). */
    static Map<Long, String> windowsOf(LimitConfig config) {
        Map<Long, String> w = new TreeMap<>();
        for (LimitConfig.Rule r : config.rules().values()) {
            r.limits().forEach(l -> w.put(l.windowMillis(), l.window()));
            r.channels()
                    .values()
                    .forEach(ls -> ls.forEach((Limit l) -> w.put(l.windowMillis(), l.window())));
        }
        return w;
    }

    /** Prints the report of one user. */
    static void print(
            RedisClusterCommands<String, String> redis,
            String prefix,
            long user,
            Map<Long, String> windows,
            PrintStream out) {
        String userKey = MirrorWrite.userKey(prefix, user);
        List<ScoredValue<String>> all = redis.zrangeWithScores(userKey, 0, -1);
        if (all.isEmpty()) {
            out.println("user " + user + ": no counted messages in Redis (" + userKey + ")");
            return;
        }
        Map<String, List<ScoredValue<String>>> byChannel = new TreeMap<>();
        ScanIterator<String> keys =
                ScanIterator.scan(redis, ScanArgs.Builder.matches(userKey + ":*").limit(100));
        while (keys.hasNext()) {
            String key = keys.next();
            byChannel.put(key.substring(userKey.length() + 1), redis.zrangeWithScores(key, 0, -1));
        }
        long latest = (long) all.get(all.size() - 1).getScore();
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
        out.println("  messages:");
        for (ScoredValue<String> m : all) {
            String channel = "?";
            for (Map.Entry<String, List<ScoredValue<String>>> e : byChannel.entrySet()) {
                if (e.getValue().stream().anyMatch(v -> v.getValue().equals(m.getValue()))) {
                    channel = e.getKey();
                }
            }
            out.println(
                    "    "
                            + Instant.ofEpochMilli((long) m.getScore())
                            + "  "
                            + channel
                            + "  "
                            + m.getValue());
        }
    }

    /** Members in the half-open window (latest - w, latest]. */
    private static long countIn(List<ScoredValue<String>> members, long latest, long w) {
        return members.stream()
                .filter(m -> m.getScore() > latest - w && m.getScore() <= latest)
                .count();
    }
}
