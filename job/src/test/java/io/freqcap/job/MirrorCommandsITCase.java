package io.freqcap.job;

import static io.freqcap.schema.Instants.DAY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.local.EmbeddedRedis;
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
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import io.freqcap.schema.mirror.MirrorWrite;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mirror's plain commands against the Lua script every write went through before (issue 47):
 * the same traffic, decided by the job's decision step (holds through quiet hours, preemption and
 * its removals, late messages, several channels), written once as the job writes it now ({@link
 * MirrorCommands}) and once as it wrote it before (every write through {@link MirrorScript},
 * trimming every channel the user had by the latest stamped timestamp), in batches of random sizes,
 * some sent again in order as after a recovery. Redis must then hold the same keys, each with the
 * same members and scores, each expiring no sooner than the script made it expire.
 */
@Timeout(120)
class MirrorCommandsITCase {
    static final long WEEK = 7 * DAY;

    static final String CONFIG =
            "{\"version\":1,\"timezone\":\"Europe/Berlin\",\"rules\":[{\"segment\":\"*\","
                    + "\"limits\":[{\"window\":\"1d\",\"max\":2},{\"window\":\"7d\",\"max\":5}],"
                    + "\"hold\":\"12h\",\"quietHours\":{\"from\":\"21:00\",\"to\":\"08:00\"},"
                    + "\"preempt\":true}]}";

    @TempDir static Path dir;
    static EmbeddedRedis redis;
    static RedisClient client;
    static RedisCommands<String, String> sync;
    static RedisAsyncCommands<String, String> async;

    @BeforeAll
    static void start() throws Exception {
        redis = EmbeddedRedis.start(dir, false);
        client = RedisClient.create(redis.uri());
        var connection = client.connect();
        sync = connection.sync();
        async = connection.async();
        sync.scriptLoad(MirrorScript.SOURCE);
        sync.scriptLoad(CommandScript.SOURCE);
    }

    @AfterAll
    static void stop() throws Exception {
        client.shutdown();
        redis.close();
    }

    /** One write as the job makes it now, and as it made it before. */
    record Pair(MirrorWrite now, MirrorWrite before) {}

    @Test
    void plainCommandsLeaveWhatTheScriptLeftKeyByKey() throws Exception {
        for (long seed = 1; seed <= 3; seed++) {
            List<Pair> writes = traffic(new Random(seed), 150, 3_000);
            long trims = writes.stream().filter(p -> trims(p.now())).count();
            assertTrue(trims > 0 && trims < writes.size(), trims + " trims of " + writes.size());
            assertTrue(
                    writes.stream().anyMatch(p -> p.now().kind() == MirrorWrite.Kind.REMOVE),
                    "preemption removes held messages");
            Random batches = new Random(seed);
            String old = "old" + seed;
            String now = "new" + seed;
            String carried = "carried" + seed;
            int i = 0;
            while (i < writes.size()) {
                int n = Math.min(writes.size() - i, 1 + batches.nextInt(60));
                int from = batches.nextInt(8) == 0 ? Math.max(0, i - 80) : i; // a replay
                List<Pair> batch = writes.subList(from, i + n);
                script(old, batch.stream().map(Pair::before).toList());
                commands(now, batch.stream().map(Pair::now).toList());
                commandsInScripts(carried, batch.stream().map(Pair::now).toList());
                i += n;
            }
            assertSameKeys(old, now);
            assertSameKeys(old, carried);
        }
    }

    private static boolean trims(MirrorWrite w) {
        return w.kind() == MirrorWrite.Kind.ADD && w.latestStamped() != MirrorWrite.NO_TRIM;
    }

    /** Decided as the job decides, with message ids kept (the mirror on). */
    static List<Pair> traffic(Random rnd, int users, int messages) throws Exception {
        LimitConfig config = LimitConfig.parse(CONFIG);
        MemoryHistories histories = new MemoryHistories();
        MemoryHeld held = new MemoryHeld();
        Stores stores = new Stores(histories, held);
        DecisionStep step = new DecisionStep(stores, true);
        String[] channels = {"push", "email", "sms"};
        long start = System.currentTimeMillis() - 15 * DAY;
        long clock = Long.MIN_VALUE;
        List<Pair> out = new ArrayList<>();
        for (int i = 0; i < messages; i++) {
            long user = rnd.nextInt(users);
            long t =
                    start
                            + i * (20 * DAY / messages)
                            - (rnd.nextInt(10) == 0 ? rnd.nextInt((int) (2 * DAY)) : 0);
            String v =
                    String.format(
                            "{\"messageId\":\"m-%d\",\"userId\":%d,\"channel\":\"%s\","
                                    + "\"category\":\"marketing\",\"priority\":%d,\"timestamp\":%d}",
                            i, user, channels[rnd.nextInt(3)], rnd.nextInt(100), t);
            InboundMessage in =
                    InboundMessage.of(
                            new RawRecord(null, v.getBytes(StandardCharsets.UTF_8), "in", 0, i));
            clock = Math.max(clock, t);
            CountedHistory before = histories.get(user);
            String[] channelsBefore = before.isEmpty() ? new String[0] : before.channels();
            Decided d = step.decide(in, config, "*", null, Long.MIN_VALUE, clock);
            stores.apply(d);
            MirrorWrite removal = d.mirrorRemoval();
            if (removal != null) {
                out.add(new Pair(removal, removal.withHighestScore(MirrorWrite.UNKNOWN_SCORE)));
            }
            MirrorWrite w = d.mirrorWrite();
            if (d.decision() == Decision.ALLOWED) {
                if (rnd.nextInt(20) == 0) {
                    // As restored from a backlog of an earlier version: through the old script,
                    // in order with the commands around it.
                    w = w.withHighestScore(MirrorWrite.UNKNOWN_SCORE);
                }
                out.add(
                        new Pair(
                                w,
                                MirrorWrite.counted(
                                        user,
                                        w.windowMillis(),
                                        histories.get(user).latestStamped(),
                                        w.messageIds()[0],
                                        w.timestamps()[0],
                                        w.channels()[0],
                                        channelsBefore)));
            }
        }
        return out;
    }

    static void script(String prefix, List<MirrorWrite> writes) {
        for (MirrorWrite w : writes) {
            sync.evalsha(
                    MirrorScript.SHA1,
                    ScriptOutputType.INTEGER,
                    MirrorScript.keys(prefix, w),
                    MirrorScript.args(w, System.currentTimeMillis()));
        }
    }

    static void commands(String prefix, List<MirrorWrite> writes) throws Exception {
        List<RedisFuture<?>> sent = new ArrayList<>();
        MirrorCommands.send(
                prefix,
                writes,
                System.currentTimeMillis(),
                50,
                new PlainCommands(async, async, async, prefix, sent::add));
        for (RedisFuture<?> f : sent) {
            f.get();
        }
    }

    /** The same commands carried by {@link CommandScript} calls of up to 7 users. */
    static void commandsInScripts(String prefix, List<MirrorWrite> writes) {
        CommandScript.Calls calls =
                new CommandScript.Calls(
                        7,
                        (keys, args) ->
                                sync.evalsha(
                                        CommandScript.SHA1, ScriptOutputType.INTEGER, keys, args),
                        scripted -> script(prefix, scripted));
        MirrorCommands.send(prefix, writes, System.currentTimeMillis(), 50, calls);
        calls.flush();
    }

    /**
     * A removal of more members than Lua unpacks at once (a cancel-held of a user's 2,500 held
     * messages), carried by script calls: every member leaves both keys.
     */
    @Test
    void scriptCallsCarryCommandsOfManyMembers() throws Exception {
        int n = 2_500;
        String[] ids = new String[n];
        String[] channels = new String[n];
        long[] ts = new long[n];
        for (int i = 0; i < n; i++) {
            ids[i] = "h-" + i;
            channels[i] = "push";
            ts[i] = System.currentTimeMillis() + i;
        }
        MirrorWrite add =
                new MirrorWrite(
                        9,
                        WEEK,
                        MirrorWrite.Kind.ADD,
                        MirrorWrite.NO_TRIM,
                        new String[] {"push"},
                        new int[n],
                        ts,
                        ids,
                        ts[n - 1]);
        commandsInScripts("many", List.of(add));
        assertEquals(n, sync.zcard("many:{9}"));
        assertEquals(n, sync.zcard("many:{9}:push"));
        commandsInScripts("many", List.of(MirrorWrite.removal(9, WEEK, ids, channels)));
        assertEquals(0, sync.exists("many:{9}", "many:{9}:push"));
    }

    static void assertSameKeys(String old, String now) {
        Map<String, Map<String, Double>> before = keys(old);
        Map<String, Map<String, Double>> after = keys(now);
        assertTrue(before.size() > 100, before.size() + " keys");
        java.util.Set<String> onlyBefore = new java.util.TreeSet<>(before.keySet());
        onlyBefore.removeAll(after.keySet());
        java.util.Set<String> onlyAfter = new java.util.TreeSet<>(after.keySet());
        onlyAfter.removeAll(before.keySet());
        assertEquals(
                List.of(List.of(), List.of()),
                List.of(List.copyOf(onlyBefore), List.copyOf(onlyAfter)),
                "keys only the script left, only the commands left");
        for (String k : before.keySet()) {
            assertEquals(before.get(k), after.get(k), k);
            long ttlBefore = sync.pttl(old + k);
            long ttlAfter = sync.pttl(now + k);
            assertTrue(ttlBefore > 0 && ttlAfter > 0, k + " expires");
            assertTrue(
                    ttlAfter >= ttlBefore - 10_000,
                    k + " expires in " + ttlAfter + " ms, the script's in " + ttlBefore);
        }
    }

    /** Per key (without the prefix), its members and scores. */
    static Map<String, Map<String, Double>> keys(String prefix) {
        Map<String, Map<String, Double>> out = new TreeMap<>();
        ScanIterator.scan(sync, ScanArgs.Builder.matches(prefix + ":*").limit(1000))
                .forEachRemaining(
                        key -> {
                            Map<String, Double> m = new TreeMap<>();
                            sync.zrangeWithScores(key, 0, -1)
                                    .forEach(v -> m.put(v.getValue(), v.getScore()));
                            out.put(key.substring(prefix.length()), m);
                        });
        return out;
    }
}
