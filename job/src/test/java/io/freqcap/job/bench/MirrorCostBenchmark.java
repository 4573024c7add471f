package io.freqcap.job.bench;

import io.freqcap.job.local.EmbeddedRedis;
import io.freqcap.job.local.TempDirs;
import io.freqcap.operators.backtest.MemoryHeld;
import io.freqcap.operators.backtest.MemoryHistories;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.capping.decision.DecisionStep;
import io.freqcap.operators.capping.decision.Stores;
import io.freqcap.operators.mirror.CommandScript;
import io.freqcap.operators.mirror.MirrorCommands;
import io.freqcap.operators.mirror.MirrorScript;
import io.freqcap.operators.mirror.PlainCommands;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
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
 * email, config 1d=2 and 7d=5). The mirror's writes are what the job's decision step makes of it
 * (in memory, message ids kept, as with {@code --redis}); they are sent as the job sends them, in
 * batches of 500 with up to 8 in flight: as plain commands ({@link MirrorCommands}, the mirror in a
 * cluster), as those commands in script calls of 50 users ({@link CommandScript}, the mirror on a
 * single Redis), and through the old Lua script alone ({@link MirrorScript}, with the writes the
 * job made before issue 47: every write trimming, naming every channel). The sliding log sends one
 * {@code EVALSHA} per decision (ZREMRANGEBYSCORE, ZCOUNT, ZADD, PEXPIRE on the user's key, window
 * 7d, max 5), pipelined the same way, over every message.
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
                                    "mirror as plain commands, per counted message",
                                    traffic.counted(),
                                    () -> commands(c, traffic)));
                    rows.add(
                            measure(
                                    c,
                                    "mirror as the Lua script alone, per counted message",
                                    traffic.counted(),
                                    () -> script(c, traffic)));
                    rows.add(
                            measure(
                                    c,
                                    "mirror as commands in script calls, per counted message",
                                    traffic.counted(),
                                    () -> commandScript(c, traffic)));
                }
                System.out.println("| sent | Redis CPU µs | commands | client CPU µs | s |");
                System.out.println("|---|---|---|---|---|");
                rows.forEach(System.out::println);
            } finally {
                client.shutdown();
            }
        } finally {
            TempDirs.deleteRecursively(work);
        }
        System.exit(0);
    }

    /** The traffic's decisions: per message its user and time; the mirror's writes in order. */
    record Traffic(
            long[] users,
            long[] times,
            List<MirrorWrite> writes,
            List<MirrorWrite> scriptWrites,
            long counted) {
        static Traffic of(int messages, int users, int days) throws Exception {
            LimitConfig config = LimitConfig.parse(EndToEndBenchmark.LIMITS);
            Stores stores = new Stores(new MemoryHistories(), new MemoryHeld());
            DecisionStep step = new DecisionStep(stores, true);
            Random rnd = new Random(42);
            long start = 1_763_769_600_000L;
            double span = days * 86_400_000.0 / messages;
            long[] u = new long[messages];
            long[] t = new long[messages];
            List<MirrorWrite> writes = new ArrayList<>();
            // What the job sent before issue 47: every write trims, naming every channel.
            List<MirrorWrite> scriptWrites = new ArrayList<>();
            java.util.Map<Long, long[]> latest = new java.util.HashMap<>();
            java.util.Map<Long, java.util.Set<String>> channels = new java.util.HashMap<>();
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
                Decided d = step.decide(in, config, "*", null, Long.MIN_VALUE, t[i]);
                stores.apply(d);
                MirrorWrite w = d.mirrorWrite();
                if (w != null) {
                    writes.add(w);
                    counted += w.size();
                    long[] l = latest.computeIfAbsent(u[i], k -> new long[] {Long.MIN_VALUE});
                    l[0] = Math.max(l[0], t[i]);
                    var before = channels.computeIfAbsent(u[i], k -> new java.util.TreeSet<>());
                    scriptWrites.add(
                            MirrorWrite.counted(
                                    u[i],
                                    w.windowMillis(),
                                    l[0],
                                    w.messageIds()[0],
                                    w.timestamps()[0],
                                    w.channels()[0],
                                    before.toArray(new String[0])));
                    before.add(w.channels()[0]);
                }
            }
            return new Traffic(u, t, writes, scriptWrites, counted);
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
        long calls = commandCalls(stats);
        if (Boolean.getBoolean("bench.commandstats")) {
            stats.lines()
                    .filter(l -> l.startsWith("cmdstat_"))
                    .forEach(l -> System.out.println("  " + l));
        }
        String row =
                String.format(
                        "| %s | %.2f | %.2f | %.2f | %.1f |",
                        name, cpu * 1e6 / per, (double) calls / per, client / 1e3 / per, seconds);
        System.out.println(row);
        return row;
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

    static long commands(StatefulRedisConnection<String, String> c, Traffic traffic)
            throws Exception {
        Pipeline p = new Pipeline(c);
        // Every write here knows its user: the script is never called.
        MirrorCommands.Target target = new PlainCommands(p.async, p.async, p.async, "fc", p::add);
        List<MirrorWrite> w = traffic.writes();
        for (int i = 0; i < w.size(); i += BATCH) {
            MirrorCommands.send(
                    "fc",
                    w.subList(i, Math.min(w.size(), i + BATCH)),
                    System.currentTimeMillis(),
                    50,
                    target);
            p.flush();
        }
        p.close();
        return w.size();
    }

    static long commandScript(StatefulRedisConnection<String, String> c, Traffic traffic)
            throws Exception {
        c.sync().scriptLoad(CommandScript.SOURCE);
        Pipeline p = new Pipeline(c);
        var calls =
                new CommandScript.Calls(
                        50,
                        (keys, args) ->
                                p.add(
                                        p.async.evalsha(
                                                CommandScript.SHA1,
                                                ScriptOutputType.INTEGER,
                                                keys,
                                                args)),
                        writes -> {
                            throw new IllegalStateException("every write here knows its user");
                        });
        List<MirrorWrite> w = traffic.writes();
        for (int i = 0; i < w.size(); i += BATCH) {
            MirrorCommands.send(
                    "fc",
                    w.subList(i, Math.min(w.size(), i + BATCH)),
                    System.currentTimeMillis(),
                    50,
                    calls);
            calls.flush();
            p.flush();
        }
        p.close();
        return w.size();
    }

    static long script(StatefulRedisConnection<String, String> c, Traffic traffic)
            throws Exception {
        c.sync().scriptLoad(MirrorScript.SOURCE);
        Pipeline p = new Pipeline(c);
        List<MirrorWrite> w = traffic.scriptWrites();
        for (int i = 0; i < w.size(); i += BATCH) {
            List<MirrorWrite> batch = w.subList(i, Math.min(w.size(), i + BATCH));
            for (int j = 0; j < batch.size(); j += 50) {
                List<MirrorWrite> call = batch.subList(j, Math.min(batch.size(), j + 50));
                p.add(
                        p.async.evalsha(
                                MirrorScript.SHA1,
                                ScriptOutputType.INTEGER,
                                MirrorScript.keys("fc", call),
                                MirrorScript.args(call, System.currentTimeMillis())));
            }
            p.flush();
        }
        p.close();
        return w.size();
    }
}
