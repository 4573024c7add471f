package io.freqcap.job.bench;

import io.freqcap.job.local.EmbeddedRedis;
import io.freqcap.job.local.TempDirs;
import io.freqcap.job.testutils.Traffic;
import io.freqcap.operators.backtest.MemoryHeld;
import io.freqcap.operators.backtest.MemoryHistories;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.capping.decision.DecisionStep;
import io.freqcap.operators.capping.decision.Stores;
import io.freqcap.operators.capping.rule.Judging;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import io.freqcap.schema.mirror.MirrorLog;
import io.freqcap.schema.mirror.MirrorWrite;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the Redis mirror costs Redis against what the seed's design, Grab's Lua sliding log, costs
 * it to decide, side by side on one {@code redis-server} (issue 47): Redis CPU (INFO cpu before and
 * after) and commands (INFO commandstats, those a script runs included) per counted message and per
 * decision.
 *
 * <p>The traffic is the end-to-end benchmark's (M messages over N users and D days, one in three
 * email, config 1d=2 and 7d=5). The mirror's writes are what the job makes of it (in memory,
 * message ids kept, as with {@code --redis}): layout 2 (contract v6 §7), each a user's whole log
 * sent as one {@code SET ... PXAT}, pipelined in batches of 500 with up to 8 in flight; once per
 * counted message (the worst case: no two changes of a user coalesce), and as the job coalesces
 * them (one per user changed within 10,000 messages: 100 ms at 100,000 messages/s). Layout 1 of
 * version 5 (two sorted sets per user) is written once, for its memory per user beside layout 2's.
 * The sliding log sends one {@code EVALSHA} per decision (ZREMRANGEBYSCORE, ZCOUNT, ZADD, PEXPIRE
 * on the user's key, window 7d, max 5), pipelined the same way, over every message.
 *
 * <p>Run: {@code mvn -q -DskipTests install && mvn -q -pl job exec:exec@mirror-cost}
 * (bench.messages, bench.users, bench.days; bench.rounds alternates the ways that many times;
 * -Dbench.only=TEXT runs only the ways whose name contains it; -Dbench.commandstats=true prints
 * Redis' time per command). Besides Redis' CPU it prints this JVM's (the client's: encoding and
 * lettuce), which is what the job pays on its side.
 */
public final class MirrorCostBenchmark {
    static final String SLIDING_LOG =
            String.join(
                    "\n",
                    "local now, window, max = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])",
                    "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)",
                    "local n = redis.call('ZCOUNT', KEYS[1], now - window, '+inf')",
                    "if n < max then redis.call('ZADD', KEYS[1], now, ARGV[4]) end",
                    "redis.call('PEXPIRE', KEYS[1], window)",
                    "return n",
                    "");

    private static final int BATCH = 500;
    private static final int COALESCE = 10_000;
    private static final int IN_FLIGHT = 8;
    private static final long WEEK = 7 * 86_400_000L;

    public static void main(String[] args) throws Exception {
        int messages = Integer.getInteger("bench.messages", 3_000_000);
        int users = Integer.getInteger("bench.users", 1_000_000);
        int days = Integer.getInteger("bench.days", 10);
        int rounds = Integer.getInteger("bench.rounds", 2);
        Path work = Files.createTempDirectory("freqcap-mirror-cost");
        try (EmbeddedRedis redis = EmbeddedRedis.start(work.resolve("redis"), false)) {
            Traffic traffic = Traffic.of(messages, users, days);
            System.out.printf(
                    "%,d messages over %,d users and %d days: %,d counted, in %,d writes%n",
                    messages, users, days, traffic.counted(), traffic.writes().size());
            RedisClient client = RedisClient.create(redis.uri());
            try (StatefulRedisConnection<String, String> c = client.connect()) {
                List<String> rows = new ArrayList<>();
                for (int r = 0; r < rounds; r++) {
                    rows.add(
                            measure(
                                    c,
                                    "Lua sliding log, per decision",
                                    messages,
                                    () -> slidingLog(c, traffic)));
                    rows.add(
                            measure(
                                    c,
                                    "layout 1 (v5: two sorted sets), memory only, per counted message",
                                    traffic.counted(),
                                    () -> layoutOne(c, traffic)));
                    rows.add(
                            measure(
                                    c,
                                    "layout 2, a SET per counted message, per counted message",
                                    traffic.counted(),
                                    () -> layoutTwo(c, traffic.writes())));
                    rows.add(
                            measure(
                                    c,
                                    "layout 2, a SET per user changed in 100 ms at 100k msg/s,"
                                            + " per counted message",
                                    traffic.counted(),
                                    () -> layoutTwo(c, traffic.coalesced())));
                }
                System.out.println(
                        "| sent | Redis CPU µs | commands | client CPU µs | s | Redis bytes/user |");
                System.out.println("|---|---|---|---|---|---|");
                rows.forEach(System.out::println);
            } finally {
                client.shutdown();
            }
        } finally {
            TempDirs.deleteRecursively(work);
        }
        System.exit(0);
    }

    /**
     * The traffic's decisions: per message its user and time; the mirror's writes in order, one per
     * counted message (each the user's whole log after it), and as the job coalesces them: one per
     * user changed within each {@link #COALESCE} messages (100 ms at 100,000 messages/s).
     */
    record Traffic(
            long[] users,
            long[] times,
            List<MirrorWrite> writes,
            List<MirrorWrite> coalesced,
            List<MirrorLog.Entry[]> logs,
            long counted) {
        static Traffic of(int messages, int users, int days) throws Exception {
            LimitConfig config = LimitConfig.parse(EndToEndBenchmark.LIMITS);
            MemoryHistories histories = new MemoryHistories();
            Stores stores = Stores.of(histories, new MemoryHeld());
            DecisionStep step = new DecisionStep(stores, true);
            long window = config.longestWindowMillis();
            Random rnd = new Random(42);
            long start = 1_763_769_600_000L;
            double span = days * 86_400_000.0 / messages;
            long[] u = new long[messages];
            long[] t = new long[messages];
            List<MirrorWrite> writes = new ArrayList<>();
            List<MirrorWrite> coalesced = new ArrayList<>();
            List<MirrorLog.Entry[]> logs = new ArrayList<>();
            java.util.Set<Long> changed = new java.util.LinkedHashSet<>();
            long counted = 0;
            for (int i = 0; i < messages; i++) {
                u[i] = rnd.nextInt(users);
                t[i] = start + (long) (i * span) + rnd.nextInt(3_600_000);
                String v =
                        "{\"messageId\":\"m-"
                                + i
                                + "\",\"userId\":"
                                + u[i]
                                + ",\"channel\":\""
                                + (i % 3 == 0 ? "email" : "push")
                                + "\",\"category\":\"marketing\",\"timestamp\":"
                                + t[i]
                                + "}";
                InboundMessage in =
                        InboundMessage.of(
                                new RawRecord(
                                        null, v.getBytes(StandardCharsets.UTF_8), "in", 0, i));
                Decided d =
                        step.decide(in, config, "*", null, new Judging.Times(Long.MIN_VALUE, t[i]));
                stores.apply(d);
                if (d.counting() != null) {
                    counted++;
                    MirrorWrite w = MirrorLog.of(u[i], histories.get(u[i]), window);
                    writes.add(w);
                    logs.add(MirrorLog.decode(w.log()).toArray(new MirrorLog.Entry[0]));
                    changed.add(u[i]);
                }
                if ((i + 1) % COALESCE == 0 || i == messages - 1) {
                    for (long user : changed) {
                        coalesced.add(MirrorLog.of(user, histories.get(user), window));
                    }
                    changed.clear();
                }
            }
            return new Traffic(u, t, writes, coalesced, logs, counted);
        }
    }

    interface Run {
        long send() throws Exception;
    }

    /** Runs one mode on an empty Redis; returns its table row. */
    static String measure(StatefulRedisConnection<String, String> c, String name, long per, Run run)
            throws Exception {
        if (!name.contains(System.getProperty("bench.only", ""))) {
            return "| " + name + " | not run (-Dbench.only) | | | |";
        }
        RedisCommands<String, String> sync = c.sync();
        sync.flushall();
        sync.configResetstat();
        double cpu0 = cpuSeconds(sync.info("cpu"));
        long t0 = System.nanoTime();
        long client0 = clientCpuNanos();
        run.send();
        long client = clientCpuNanos() - client0;
        double seconds = (System.nanoTime() - t0) / 1e9;
        double cpu = cpuSeconds(sync.info("cpu")) - cpu0;
        String stats = sync.info("commandstats");
        long users = sync.dbsize();
        long bytes = usedMemory(sync.info("memory"));
        long calls = commandCalls(stats);
        if (Boolean.getBoolean("bench.commandstats")) {
            stats.lines()
                    .filter(l -> l.startsWith("cmdstat_"))
                    .forEach(l -> System.out.println("  " + l));
        }
        String row =
                String.format(
                        "| %s | %.2f | %.2f | %.2f | %.1f | %s |",
                        name,
                        cpu * 1e6 / per,
                        (double) calls / per,
                        client / 1e3 / per,
                        seconds,
                        name.startsWith("Lua")
                                ? ""
                                : String.format(
                                        "%.0f", (double) bytes / countUsers(sync, users, name)));
        System.out.println(row);
        return row;
    }

    /** Redis' {@code used_memory} (bytes). */
    static long usedMemory(String info) {
        Matcher m = Pattern.compile("used_memory:(\\d+)").matcher(info);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    /** Users with keys: layout 2 has one key per user, layout 1 several. */
    static long countUsers(RedisCommands<String, String> sync, long keys, String name) {
        if (!name.startsWith("layout 1")) {
            return Math.max(1, keys);
        }
        return Math.max(1, sync.keys("fc:*").stream().filter(k -> k.endsWith("}")).count());
    }

    /** This JVM's CPU (the client: encoding, lettuce's threads), in ns. */
    static long clientCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean)
                        java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    static double cpuSeconds(String info) {
        double s = 0;
        for (String key : List.of("used_cpu_sys", "used_cpu_user")) {
            Matcher m = Pattern.compile(key + ":([0-9.]+)").matcher(info);
            if (m.find()) {
                s += Double.parseDouble(m.group(1));
            }
        }
        return s;
    }

    /** Commands Redis ran (those a script ran included), not counting the benchmark's own. */
    static long commandCalls(String info) {
        long n = 0;
        Matcher m = Pattern.compile("cmdstat_([a-z|]+):calls=(\\d+)").matcher(info);
        while (m.find()) {
            if (!m.group(1).startsWith("info") && !m.group(1).startsWith("config")) {
                n += Long.parseLong(m.group(2));
            }
        }
        return n;
    }

    /** Pipelined batches, at most {@link #IN_FLIGHT} unanswered. */
    static final class Pipeline {
        final StatefulRedisConnection<String, String> c;
        final RedisAsyncCommands<String, String> async;
        final ArrayDeque<List<RedisFuture<?>>> inFlight = new ArrayDeque<>();
        List<RedisFuture<?>> batch = new ArrayList<>();

        Pipeline(StatefulRedisConnection<String, String> c) {
            this.c = c;
            this.async = c.async();
            c.setAutoFlushCommands(false);
        }

        void add(RedisFuture<?> f) {
            batch.add(f);
        }

        void flush() throws Exception {
            if (batch.isEmpty()) {
                return;
            }
            c.flushCommands();
            inFlight.add(batch);
            batch = new ArrayList<>();
            while (inFlight.size() >= IN_FLIGHT) {
                awaitOldest();
            }
        }

        void awaitOldest() throws Exception {
            for (RedisFuture<?> f : inFlight.poll()) {
                f.get();
            }
        }

        void close() throws Exception {
            flush();
            while (!inFlight.isEmpty()) {
                awaitOldest();
            }
            c.setAutoFlushCommands(true);
        }
    }

    static long slidingLog(StatefulRedisConnection<String, String> c, Traffic traffic)
            throws Exception {
        String sha = c.sync().scriptLoad(SLIDING_LOG);
        Pipeline p = new Pipeline(c);
        String week = Long.toString(WEEK);
        for (int i = 0; i < traffic.users().length; i++) {
            p.add(
                    p.async.evalsha(
                            sha,
                            ScriptOutputType.INTEGER,
                            new String[] {"sl:{" + traffic.users()[i] + "}"},
                            Long.toString(traffic.times()[i]),
                            week,
                            "5",
                            "m-" + i));
            if (p.batch.size() == BATCH) {
                p.flush();
            }
        }
        p.close();
        return traffic.users().length;
    }

    /**
     * Layout 2 as the job sends it: per write one {@code SET key log PXAT expireAt} (a deletion:
     * {@code DEL}), pipelined in batches of {@link #BATCH}.
     */
    static long layoutTwo(StatefulRedisConnection<String, String> c, List<MirrorWrite> writes)
            throws Exception {
        Pipeline p = new Pipeline(c);
        long now = System.currentTimeMillis();
        for (MirrorWrite w : writes) {
            String key = MirrorWrite.userKey("fc", w.userId());
            if (w.deletes()) {
                p.add(p.async.del(key));
            } else {
                // The traffic lies in the past: expire a window after now, as a live job would.
                long expireAt = Math.max(w.expireAt(), now + WEEK);
                p.add(
                        p.async.set(
                                key,
                                new String(w.log(), StandardCharsets.UTF_8),
                                io.lettuce.core.SetArgs.Builder.pxAt(expireAt)));
            }
            if (p.batch.size() == BATCH) {
                p.flush();
            }
        }
        p.close();
        return writes.size();
    }

    /**
     * Layout 1 of version 5, for its memory beside layout 2's: each user's counted messages of its
     * last log in two sorted sets (the user's and the channel's), each with an expiry.
     */
    static long layoutOne(StatefulRedisConnection<String, String> c, Traffic traffic)
            throws Exception {
        java.util.Map<Long, MirrorLog.Entry[]> last = new java.util.HashMap<>();
        for (int i = 0; i < traffic.writes().size(); i++) {
            last.put(traffic.writes().get(i).userId(), traffic.logs().get(i));
        }
        Pipeline p = new Pipeline(c);
        long expireAt = System.currentTimeMillis() + WEEK;
        for (var e : last.entrySet()) {
            String key = MirrorWrite.userKey("fc", e.getKey());
            for (MirrorLog.Entry m : e.getValue()) {
                p.add(p.async.zadd(key, m.score(), m.messageId()));
                p.add(p.async.zadd(key + ":" + m.channel(), m.score(), m.messageId()));
                p.add(p.async.pexpireat(key + ":" + m.channel(), expireAt));
            }
            p.add(p.async.pexpireat(key, expireAt));
            if (p.batch.size() >= BATCH) {
                p.flush();
            }
        }
        p.close();
        return last.size();
    }
}
