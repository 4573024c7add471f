package io.freqcap.operators.bench;

import static io.freqcap.schema.Instants.DAY;

import io.freqcap.operators.capping.CappingFunction;
import io.freqcap.operators.capping.CappingHarnesses;
import io.freqcap.operators.capping.CappingOperator;
import io.freqcap.operators.capping.CappingSettings;
import io.freqcap.operators.capping.held.HeldMessages;
import io.freqcap.operators.capping.lifetime.LifetimeStore;
import io.freqcap.operators.capping.outputs.HeldNotices;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.message.RawRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.event.WatermarkEvent;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.state.rocksdb.RocksDBKeyedStateBackend;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.LatencyMarker;
import org.apache.flink.streaming.runtime.streamrecord.RecordAttributes;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.apache.flink.util.OutputTag;

/**
 * The capping operator alone over RocksDB state: N users, M messages over D simulated days, two
 * parallel instances on two threads (as p=2 would run them), each owning half the key groups.
 *
 * <p>Run: {@code mvn -q -pl operators -am test-compile exec:java -Dexec.args="1000000 5000000 10"}
 * (users, messages, days). Reports decisions/s and RocksDB SST bytes per user after a flush and a
 * compaction of the history column family.
 *
 * <p>Heavy users: {@code -Dbench.heavy=K} sends a share {@code -Dbench.heavyShare} (default all) of
 * the messages from K more users, each user's 1 s apart in time order, under {@link #LONG_CONFIG}
 * (as {@code -Dbench.longConfig=true} does for the spread users alone).
 *
 * <p>Taking the calendar config apart (what each feature costs): {@code -Dbench.config=<json>}
 * decides under another config; {@code -Dbench.noCampaign=true} and {@code -Dbench.noZone=true}
 * send the calendar traffic without campaigns or zones.
 *
 * <p>Issue 14's goal, back to back in one JVM: {@code -Dbench.pairs=N} runs the rolling config and
 * the calendar config N times each, alternating, and prints each pair's ratio and the medians.
 */
public final class CappingBenchmark {
    static final String CONFIG =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"1d\",\"max\":2},{\"window\":\"7d\",\"max\":5}]}]}";
    static final String LONG_CONFIG =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"90d\",\"max\":1000000}]}]}";

    /**
     * Issue 14's config: calendar days and weeks in the users' zones, a category and a campaign
     * limit, and a shadow ({@code -Dbench.calendarConfig=true}; messages then carry zones,
     * categories and campaigns).
     */
    static final String CALENDAR_CONFIG =
            "{\"version\":1,\"timezone\":\"Asia/Singapore\",\"rules\":[{\"segment\":\"*\","
                    + "\"limits\":[{\"calendar\":\"day\",\"max\":2},{\"calendar\":\"week\",\"max\":5}],"
                    + "\"categories\":{\"promo\":[{\"calendar\":\"week\",\"max\":2}]},"
                    + "\"campaign\":[{\"window\":\"3d\",\"max\":1}]}],"
                    + "\"shadow\":{\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"calendar\":\"day\",\"max\":1},{\"window\":\"7d\",\"max\":4}]}]}}";

    /**
     * Issue 32's config: the calendar config with a hold of a day and quiet hours for push in the
     * users' zones ({@code -Dbench.config=hold}, with {@code -Dbench.baseConfig=calendar} for the
     * same config without them).
     */
    static final String HOLD_CONFIG =
            CALENDAR_CONFIG.replace(
                    "\"campaign\":[{\"window\":\"3d\",\"max\":1}]}]",
                    "\"campaign\":[{\"window\":\"3d\",\"max\":1}],\"hold\":\"1d\","
                            + "\"quietHours\":{\"from\":\"21:00\",\"to\":\"08:00\","
                            + "\"channels\":[\"push\"]}}]");

    /**
     * About a tenth of messages held: push in quiet hours 23:00-01:30 held until 01:30 (a {@code
     * 3h} hold reaches no later period, so what the limits cap is REJECTED as without it).
     */
    static final String HOLD_TENTH_CONFIG =
            CALENDAR_CONFIG.replace(
                    "\"campaign\":[{\"window\":\"3d\",\"max\":1}]}]",
                    "\"campaign\":[{\"window\":\"3d\",\"max\":1}],\"hold\":\"3h\","
                            + "\"quietHours\":{\"from\":\"23:00\",\"to\":\"01:30\","
                            + "\"channels\":[\"push\"]}}]");

    /**
     * For the heavy holder ({@code -Dbench.heavy=1 -Dbench.heavyShare=0.002}: one user's 10,000
     * messages a second apart): one message per 10 s, held up to a day, 10,000 may wait; the heavy
     * user's messages pile up held, everyone else's pass at once. Run it with and without the heavy
     * user: the others' decisions and releases must keep their rate.
     */
    static final String HEAVY_HOLD_CONFIG =
            "{\"version\":1,\"maxHeld\":10000,\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"10s\",\"max\":1},{\"window\":\"1d\",\"max\":100000}],"
                    + "\"hold\":\"1d\"}]}";

    /**
     * Issue 39's config: the rolling config with the last place of every limit reserved for
     * priority 70 and at most three distinct campaigns a week ({@code -Dbench.config=priority};
     * with {@code -Dbench.priorities=true} messages carry priorities 10, 40 and 80).
     */
    static final String PRIORITY_CONFIG =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":"
                    + "[{\"window\":\"1d\",\"max\":2,\"reserve\":{\"slots\":1,\"priority\":70}},"
                    + "{\"window\":\"7d\",\"max\":5,\"reserve\":{\"slots\":1,\"priority\":70}}],"
                    + "\"campaigns\":[{\"window\":\"7d\",\"max\":3}]}]}";

    /**
     * Issue 50's config: the calendar config with {@code fatigue} on the rule and the shadow rule
     * ({@code -Dbench.config=fatigue -Dbench.baseConfig=calendar -Dbench.sameTraffic=true}: what
     * fatigue costs; run with fewer users, say 200,000, so that most reach a step).
     */
    static final String FATIGUE_CONFIG =
            CALENDAR_CONFIG
                    .replace(
                            "\"campaign\":[{\"window\":\"3d\",\"max\":1}]}]",
                            "\"campaign\":[{\"window\":\"3d\",\"max\":1}],\"fatigue\":{\"after\":5,"
                                    + "\"scale\":0.5,\"floor\":1,\"window\":\"30d\"}}]")
                    .replace(
                            "{\"window\":\"7d\",\"max\":4}]}]}}",
                            "{\"window\":\"7d\",\"max\":4}],\"fatigue\":{\"after\":3,\"scale\":0.25,"
                                    + "\"floor\":1,\"window\":\"14d\"}}]}}");

    /**
     * Issue 60's config: the calendar config with a lifetime limit on every campaign ({@code
     * -Dbench.config=lifetime -Dbench.baseConfig=calendar -Dbench.sameTraffic=true
     * -Dbench.campaigns=1000}: what lifetime limits cost, the same traffic without them).
     */
    static final String LIFETIME_CONFIG =
            CALENDAR_CONFIG.replace(
                    "\"campaign\":[{\"window\":\"3d\",\"max\":1}]",
                    "\"campaign\":[{\"lifetime\":true,\"max\":3},{\"window\":\"3d\",\"max\":1}]");

    /**
     * How many campaigns the calendar traffic's messages are spread over ({@code bench.campaigns}).
     */
    static final int CAMPAIGNS = Integer.getInteger("bench.campaigns", 20);

    static final String[] ZONES = {null, "Asia/Singapore", "America/New_York", "Europe/Berlin"};

    /** A config by name ({@code calendar}, {@code hold}, {@code rolling}), or the JSON itself. */
    static String named(String config) {
        return switch (config) {
            case "calendar" -> CALENDAR_CONFIG;
            case "hold" -> HOLD_CONFIG;
            case "hold-tenth" -> HOLD_TENTH_CONFIG;
            case "heavy-hold" -> HEAVY_HOLD_CONFIG;
            case "rolling" -> CONFIG;
            case "priority" -> PRIORITY_CONFIG;
            case "fatigue" -> FATIGUE_CONFIG;
            case "lifetime" -> LIFETIME_CONFIG;
            // What reading u costs alone: every message reads it, none reaches a step.
            case "fatigue-idle" ->
                    FATIGUE_CONFIG
                            .replace("\"after\":5", "\"after\":1000")
                            .replace("\"after\":3", "\"after\":1000");
            default -> config;
        };
    }

    static final long START = 1_763_769_600_000L;
    static final int MAX_PARALLELISM = 128;
    static final int PARALLELISM = 2;

    /** The temp dir the JVM started with (each run points java.io.tmpdir into its own). */
    private static final String TMP = System.getProperty("java.io.tmpdir");

    public static void main(String[] args) throws Exception {
        int users = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int messages = args.length > 1 ? Integer.parseInt(args[1]) : 5_000_000;
        int days = args.length > 2 ? Integer.parseInt(args[2]) : 10;
        int heavy = Integer.getInteger("bench.heavy", 0);
        String given = named(System.getProperty("bench.config", ""));
        int pairs = Integer.getInteger("bench.pairs", 0);
        if (pairs > 0) {
            pairs(users, messages, days, pairs, given.isBlank() ? CALENDAR_CONFIG : given);
            return;
        }
        boolean calendar = Boolean.getBoolean("bench.calendarConfig");
        String config =
                calendar
                        ? CALENDAR_CONFIG
                        : heavy > 0 || Boolean.getBoolean("bench.longConfig")
                                ? LONG_CONFIG
                                : CONFIG;
        run(users, messages, days, calendar, given.isBlank() ? config : given);
    }

    /**
     * Issue 14's comparison in one JVM ({@code -Dbench.pairs=N}): N pairs of runs, the rolling
     * config on today's traffic, then the calendar config (or {@code -Dbench.config}) on traffic
     * with zones, categories and campaigns, after a short warm-up run of each; each pair's ratio,
     * then the medians. {@code -Dbench.sameTraffic=true} sends the calendar traffic to the rolling
     * config too: what the config alone costs.
     */
    static void pairs(int users, int messages, int days, int pairs, String calendarConfig)
            throws Exception {
        // A first run in a fresh JVM is slower (the JIT, RocksDB's native library): one short
        // run of each, not counted.
        System.out.println("warm-up (not counted):");
        boolean same = Boolean.getBoolean("bench.sameTraffic");
        String base = named(System.getProperty("bench.baseConfig", "rolling"));
        if (base.isBlank()) {
            base = CONFIG;
        }
        run(users, messages / 5, days, same, base);
        heldTopic = HELD_TOPIC_SECOND;
        receipts = RECEIPTS_SECOND;
        run(users, messages / 5, days, true, calendarConfig);
        heldTopic = false;
        receipts = 0;
        double[] ratios = new double[pairs];
        double[] cpuRatios = new double[pairs];
        double[] rolling = new double[pairs];
        double[] calendar = new double[pairs];
        for (int p = 0; p < pairs; p++) {
            Result r = run(users, messages, days, same, base);
            heldTopic = HELD_TOPIC_SECOND;
            receipts = RECEIPTS_SECOND;
            Result c = run(users, messages, days, true, calendarConfig);
            heldTopic = false;
            receipts = 0;
            rolling[p] = r.decisionsPerSecond();
            calendar[p] = c.decisionsPerSecond();
            ratios[p] = c.decisionsPerSecond() / r.decisionsPerSecond();
            cpuRatios[p] = c.decisionsPerCpuSecond() / r.decisionsPerCpuSecond();
            System.out.printf(
                    "pair %d: rolling %.0f, calendar %.0f decisions/s: %.0f%% (per CPU second:"
                            + " %.0f%%)%n",
                    p + 1, rolling[p], calendar[p], 100 * ratios[p], 100 * cpuRatios[p]);
        }
        System.out.printf(
                "medians of %d pairs: rolling %.0f, calendar %.0f decisions/s; pair ratios %.0f%%"
                        + " (per CPU second: %.0f%%)%n",
                pairs,
                median(rolling),
                median(calendar),
                100 * median(ratios),
                100 * median(cpuRatios));
    }

    static double median(double[] values) {
        double[] v = values.clone();
        java.util.Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }

    /** One run's speed: wall clock, and the deciding threads' CPU time. */
    record Result(double decisionsPerSecond, double decisionsPerCpuSecond) {}

    /**
     * Decides {@code messages} messages of {@code users} users over {@code days} under {@code
     * config} and prints what it measured.
     *
     * @param calendar traffic with zones, categories and campaigns
     */
    static Result run(int users, int messages, int days, boolean calendar, String config)
            throws Exception {
        Path dir = Files.createTempDirectory(Path.of(TMP), "freqcap-bench");
        // Flink's harness and RocksDB put their own temporary files (RocksDB's native library,
        // one tmp_<uuid> per run) in java.io.tmpdir: inside ours, they are deleted with it.
        System.setProperty("java.io.tmpdir", dir.toString());
        // Also when stopped half-way (Ctrl-C, kill): no RocksDB directories left in the temp dir.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteQuietly(dir)));

        // Generated up front so the timed part is the operator only. Uniform users; timestamps
        // advance over the simulated days with up to an hour of jitter (some arrive out of order).
        Random rnd = new Random(42);
        int heavy = Integer.getInteger("bench.heavy", 0);
        double heavyShare = Double.parseDouble(System.getProperty("bench.heavyShare", "1"));
        boolean noCampaign = Boolean.getBoolean("bench.noCampaign");
        boolean noZone = Boolean.getBoolean("bench.noZone");
        boolean priorities = Boolean.getBoolean("bench.priorities");
        long[] heavyClock = new long[heavy];
        long[][] userIds =
                new long[PARALLELISM]
                        [heavy > 0 ? messages : messages / PARALLELISM + messages / 10];
        long[][] times = new long[PARALLELISM][userIds[0].length];
        int[][] seq = new int[PARALLELISM][userIds[0].length];
        int[] count = new int[PARALLELISM];
        double step = (double) days * DAY / messages;
        for (int i = 0; i < messages; i++) {
            long user;
            long time;
            if (heavy > 0 && (heavyShare >= 1 || rnd.nextDouble() < heavyShare)) {
                int k = rnd.nextInt(heavy);
                user = users + k;
                time = START + 1000 * heavyClock[k]++;
            } else {
                user = rnd.nextInt(users);
                time = START + (long) (i * step) + rnd.nextInt(3_600_000);
            }
            int p =
                    KeyGroupRangeAssignment.assignKeyToParallelOperator(
                            user, MAX_PARALLELISM, PARALLELISM);
            int n = count[p]++;
            userIds[p][n] = user;
            times[p][n] = time;
            seq[p][n] = i;
        }
        byte[] value =
                ("{\"messageId\":\"m-0000000\",\"userId\":0,\"channel\":\"push\",\"category\":"
                                + "\"marketing\",\"campaignId\":\"spring-sale\",\"timestamp\":0,"
                                + "\"payload\":{\"title\":\"20% off rides this weekend\"}}")
                        .getBytes(StandardCharsets.UTF_8);

        List<KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery>> hs =
                new ArrayList<>();
        LongAdder allowed = new LongAdder();
        LongAdder audited = new LongAdder();
        LongAdder[] allowedHere = new LongAdder[PARALLELISM];
        for (int p = 0; p < PARALLELISM; p++) {
            allowedHere[p] = new LongAdder();
            var h =
                    open(
                            config,
                            p,
                            PARALLELISM,
                            dir,
                            new CountingOutput(allowed, audited, allowedHere[p]));
            hs.add(h);
        }
        double receiptShare = receipts;
        LongAdder receiptsSent = new LongAdder();

        // Checkpoints during the run, as the job takes them (default: every 100,000 messages
        // per instance, about every 2 s of the end-to-end benchmark's rate).
        int checkpointEvery = Integer.getInteger("bench.checkpointEvery", 100_000);
        long t0 = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        // CPU time of the deciding threads, beside the wall clock: steadier where the machine's
        // other load (a shared VM's neighbours, disk) moves the wall clock by 15-30%.
        java.lang.management.ThreadMXBean cpu =
                java.lang.management.ManagementFactory.getThreadMXBean();
        LongAdder cpuNanos = new LongAdder();
        for (int p = 0; p < PARALLELISM; p++) {
            int part = p;
            Thread t =
                    new Thread(
                            () -> {
                                try {
                                    var h = hs.get(part);
                                    Random opens = new Random(part);
                                    for (int n = 0; n < count[part]; n++) {
                                        long allowedBefore = allowedHere[part].sum();
                                        long ts = times[part][n];
                                        if (n % 1000 == 0) {
                                            // The wall clock follows message time, as for live
                                            // traffic: held messages wait, then are released
                                            // (-Dbench.replay=true: a replay long after, every
                                            // held message delivered at once).
                                            h.setProcessingTime(REPLAY ? Long.MAX_VALUE / 2 : ts);
                                        }
                                        h.processElement(
                                                InboundMessage.parsed(
                                                        new OutboundMessage(
                                                                "m-" + seq[part][n],
                                                                userIds[part][n],
                                                                "push",
                                                                calendar && n % 5 == 0
                                                                        ? "promo"
                                                                        : "marketing",
                                                                ts,
                                                                calendar && !noZone
                                                                        ? ZONES[
                                                                                (int)
                                                                                        (userIds[
                                                                                                        part][
                                                                                                        n]
                                                                                                & 3)]
                                                                        : null,
                                                                calendar && !noCampaign
                                                                        ? "c" + (n % CAMPAIGNS)
                                                                        : null,
                                                                !priorities
                                                                        ? 0
                                                                        : n % 10 == 0
                                                                                ? 80
                                                                                : n % 3 == 0
                                                                                        ? 40
                                                                                        : 10),
                                                        new RawRecord(
                                                                null,
                                                                value,
                                                                "outbound-messages",
                                                                part,
                                                                n)),
                                                ts);
                                        if (receiptShare > 0
                                                && allowedHere[part].sum() > allowedBefore
                                                && opens.nextDouble() < receiptShare) {
                                            // The user opens it a minute later (§11).
                                            h.processElement(
                                                    opened(userIds[part][n], ts + 60_000, part, n),
                                                    ts);
                                            receiptsSent.increment();
                                        }
                                        if ((n + 1) % checkpointEvery == 0) {
                                            // as a job checkpoints: the cache's new histories
                                            // go to RocksDB, RocksDB flushes its memtables
                                            h.snapshot(n + 1, ts);
                                        }
                                    }
                                    cpuNanos.add(cpu.getCurrentThreadCpuTime());
                                } catch (Exception e) {
                                    throw new RuntimeException(e);
                                }
                            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        double seconds = (System.nanoTime() - t0) / 1e9;

        long sweepStart = System.nanoTime();
        for (var h : hs) {
            // Every history is still needed at this watermark: the sweep visits and keeps all.
            h.watermark(START + DAY);
            h.processBroadcastElement(ControlRecord.sweep(1), 0);
        }
        double sweepSeconds = (System.nanoTime() - sweepStart) / 1e9;
        long sst = 0;
        for (var h : hs) {
            h.snapshot(1, 1); // flushes the memtables to SST files
            ((RocksDBKeyedStateBackend<?>) h.getOperator().getKeyedStateBackend())
                    .compactState(CappingFunction.HISTORY);
        }
        sst = sstBytes(dir);
        long heldUsers = 0;
        long heldWaiting = 0;
        for (var h : hs) {
            var backend = h.getOperator().getKeyedStateBackend();
            List<Long> withHeld;
            try (var keys = backend.getKeys(HeldMessages.STATE.getName(), VoidNamespace.INSTANCE)) {
                withHeld = keys.map(k -> (Long) k).toList();
            }
            for (long u : withHeld) {
                backend.setCurrentKey(u);
                var state = CappingHarnesses.keyed(backend, HeldMessages.STATE);
                for (var it = state.iterator(); it.hasNext(); it.next()) {
                    heldWaiting++;
                }
                heldUsers++;
            }
        }
        if (config.contains("\"lifetime\"")) {
            lifetimeCosts(hs);
        }
        if (heldWaiting > 0 || HELD_DELIVERED.sum() > 0) {
            System.out.printf(
                    "held messages delivered: %,d; waiting at the end: %,d of %,d users%n",
                    HELD_DELIVERED.sumThenReset(), heldWaiting, heldUsers);
        }
        if (receiptsSent.sum() > 0) {
            System.out.printf("engagement receipts: %,d%n", receiptsSent.sum());
        }
        if (HELD_NOTICES.sum() > 0) {
            System.out.printf(
                    "held topic records (notices and tombstones): %,d%n",
                    HELD_NOTICES.sumThenReset());
        }
        System.out.printf(
                "users=%d heavy=%d messages=%d days=%d parallelism=%d%n"
                        + "decided %d in %.2f s, with a checkpoint every %,d messages per"
                        + " instance: %.0f decisions/s (allowed %d, audited %d)%n"
                        + "deciding threads' CPU time: %.2f s = %.0f decisions per CPU second%n"
                        + "RocksDB SST bytes after flush+compaction: %d = %.1f bytes/user"
                        + "%nsweep over all users: %.2f s%n",
                users,
                heavy,
                messages,
                days,
                PARALLELISM,
                allowed.sum() + audited.sum(),
                seconds,
                checkpointEvery,
                messages / seconds,
                allowed.sum(),
                audited.sum(),
                cpuNanos.sum() / 1e9,
                messages / (cpuNanos.sum() / 1e9),
                sst,
                (double) sst / users,
                sweepSeconds);
        for (var h : hs) {
            h.close();
        }
        deleteQuietly(dir);
        return new Result(messages / seconds, messages / (cpuNanos.sum() / 1e9));
    }

    /**
     * What lifetime counts take (issue 60): the pairs of user and campaign counted and their bytes
     * before compression (the campaign and the count as written, the user id and key group RocksDB
     * prefixes them with), then how long an {@code end-campaign} takes, a pass over every user.
     */
    static void lifetimeCosts(
            List<KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery>>
                    hs)
            throws Exception {
        long pairs = 0;
        long bytes = 0;
        for (var h : hs) {
            var backend = h.getOperator().getKeyedStateBackend();
            List<Long> users;
            try (var keys =
                    backend.getKeys(LifetimeStore.STATE.getName(), VoidNamespace.INSTANCE)) {
                users = keys.map(k -> (Long) k).toList();
            }
            var out = new org.apache.flink.core.memory.DataOutputSerializer(64);
            for (long u : users) {
                backend.setCurrentKey(u);
                var state = CappingHarnesses.keyed(backend, LifetimeStore.STATE);
                for (var e : state.entries()) {
                    out.clear();
                    org.apache.flink.api.common.typeutils.base.StringSerializer.INSTANCE.serialize(
                            e.getKey(), out);
                    io.freqcap.schema.lifetime.LifetimeCountSerializer.INSTANCE.serialize(
                            e.getValue(), out);
                    bytes += out.length() + Long.BYTES + 2;
                    pairs++;
                }
            }
        }
        long start = System.nanoTime();
        for (var h : hs) {
            h.processBroadcastElement(
                    new ControlRecord(
                            ControlRecord.Kind.CONFIG,
                            "{\"command\":\"end-campaign\",\"campaignId\":\"c0\"}"
                                    .getBytes(StandardCharsets.UTF_8),
                            "config",
                            0,
                            1),
                    0);
        }
        System.out.printf(
                "lifetime counts: %,d pairs of user and campaign, %.1f bytes each before"
                        + " compression; end-campaign over every user: %.2f s%n",
                pairs,
                pairs == 0 ? 0.0 : (double) bytes / pairs,
                (System.nanoTime() - start) / 1e9);
    }

    /**
     * Subtask {@code p} of the capping operator under {@code config} on RocksDB in {@code dir}, set
     * up as a TaskManager slot would have it (the RocksDB settings of deploy/, a slot's managed
     * memory), started without state, its records counted by {@code output}.
     */
    static KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> open(
            String config, int p, int parallelism, Path dir, Output<StreamRecord<Delivery>> output)
            throws Exception {
        var h =
                new KeyedBroadcastOperatorTestHarness<>(
                        new CappingOperator(
                                new CappingFunction(
                                        heldTopic
                                                ? CappingSettings.of(config)
                                                        .withHeldTopic(
                                                                (owns, others) ->
                                                                        HeldNotices.Start.of(
                                                                                List.of()))
                                                : CappingSettings.of(config))),
                        InboundMessage::routingKey,
                        Types.LONG,
                        MAX_PARALLELISM,
                        parallelism,
                        p);
        Configuration rocks = new Configuration();
        // The same RocksDB settings as deploy/flink-conf (bloom filters spare the SST reads
        // of a user's first message).
        rocks.setString(
                "state.backend.rocksdb.use-bloom-filter", System.getProperty("bloom", "true"));
        rocks.setString(
                "state.backend.rocksdb.compression.per.level",
                System.getProperty("compression", "NO_COMPRESSION;ZSTD_COMPRESSION"));
        rocks.setString(
                "state.backend.rocksdb.block.blocksize", System.getProperty("blockSize", "16kb"));
        rocks.setString(
                "state.backend.rocksdb.predefined-options",
                System.getProperty("predefined", "DEFAULT"));
        rocks.setString(
                "state.backend.rocksdb.timer-service.factory",
                System.getProperty("timers", "ROCKSDB"));
        EmbeddedRocksDBStateBackend backend =
                new EmbeddedRocksDBStateBackend(true)
                        .configure(rocks, CappingBenchmark.class.getClassLoader());
        backend.setDbStoragePath(dir.resolve("p" + p).toString());
        // The test harness gives RocksDB almost no managed memory, which flushes a tiny
        // memtable every few records; give each instance what a TaskManager slot would.
        backend.getMemoryConfiguration()
                .setFixedMemoryPerSlot(MemorySize.parse(System.getProperty("slotMemory", "512mb")));
        h.setStateBackend(backend);
        h.setCheckpointStorage(new FileSystemCheckpointStorage(dir.resolve("chk").toUri()));
        h.setOutputCreator(s -> output);
        h.setup();
        h.initializeEmptyState();
        h.open();
        return h;
    }

    /**
     * Subtask 0 of 1 under a config on RocksDB in a directory of its own (made the JVM's temporary
     * directory too, for RocksDB's files), counting what it delivers and audits; closed, the
     * directory goes.
     */
    static final class Instance implements AutoCloseable {
        final Path dir;
        final LongAdder delivered = new LongAdder();
        final LongAdder audited = new LongAdder();
        final KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> h;

        /** An instance under {@code config} in a new directory {@code prefix...} of {@code tmp}. */
        Instance(String tmp, String prefix, String config) throws Exception {
            dir = Files.createTempDirectory(Path.of(tmp), prefix);
            System.setProperty("java.io.tmpdir", dir.toString());
            try {
                h = open(config, 0, 1, dir, new CountingOutput(delivered, audited));
            } catch (Exception | Error e) {
                deleteQuietly(dir); // the operator could not open
                throw e;
            }
        }

        @Override
        public void close() throws Exception {
            h.close();
            deleteQuietly(dir);
        }
    }

    static void deleteQuietly(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException | java.io.UncheckedIOException gone) {
            // already deleted
        }
    }

    static long sstBytes(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(
                            f -> f.toString().endsWith(".sst") && !f.toString().contains("/chk/"))
                    .mapToLong(f -> f.toFile().length())
                    .sum();
        }
    }

    /**
     * {@code -Dbench.heldTopic=true} with {@code -Dbench.pairs}: the second run of each pair writes
     * the held topic's notices and tombstones (contract.md §12), so that {@code -Dbench.config=hold
     * -Dbench.baseConfig=hold -Dbench.sameTraffic=true} measures what the held topic costs.
     */
    static final boolean HELD_TOPIC_SECOND = Boolean.getBoolean("bench.heldTopic");

    /** Whether the runs now write held notices. */
    static volatile boolean heldTopic;

    /**
     * {@code -Dbench.receipts=0.2} with {@code -Dbench.pairs}: in the second run of each pair, an
     * {@code opened} receipt follows 20% of ALLOWED messages, so that {@code -Dbench.config=fatigue
     * -Dbench.baseConfig=fatigue -Dbench.sameTraffic=true} measures what engagements cost.
     */
    static final double RECEIPTS_SECOND =
            Double.parseDouble(System.getProperty("bench.receipts", "0"));

    /** The share of ALLOWED messages the runs now follow with an engagement receipt. */
    static volatile double receipts;

    /** An {@code opened} receipt of {@code user}'s, as the receipts topic carries it. */
    static InboundMessage opened(long user, long at, int partition, long offset) {
        byte[] json =
                ("{\"messageId\":\"m-1\",\"userId\":"
                                + user
                                + ",\"status\":\"opened\",\"timestamp\":"
                                + at
                                + "}")
                        .getBytes(StandardCharsets.UTF_8);
        return io.freqcap.schema.receipt.DeliveryReceipt.inbound(
                new io.freqcap.schema.message.RawRecord(
                        null, json, "delivery-receipts", partition, offset));
    }

    /** Counts outputs instead of keeping them, so memory stays flat over millions of records. */
    static final boolean REPLAY = Boolean.getBoolean("bench.replay");

    /** Deliveries of held messages (with a send time), over every run of this JVM. */
    static final LongAdder HELD_DELIVERED = new LongAdder();

    /** Held-topic records (notices and tombstones), over every run of this JVM. */
    static final LongAdder HELD_NOTICES = new LongAdder();

    static final class CountingOutput implements Output<StreamRecord<Delivery>> {
        private final LongAdder allowed;
        private final LongAdder audited;
        private final LongAdder allowedHere;

        CountingOutput(LongAdder allowed, LongAdder audited) {
            this(allowed, audited, new LongAdder());
        }

        /**
         * @param allowedHere this instance's deliveries alone (its thread reads it)
         */
        CountingOutput(LongAdder allowed, LongAdder audited, LongAdder allowedHere) {
            this.allowed = allowed;
            this.audited = audited;
            this.allowedHere = allowedHere;
        }

        @Override
        public void collect(StreamRecord<Delivery> record) {
            if (record.getValue().isHeldTopic()) {
                HELD_NOTICES.increment();
                return;
            }
            allowed.increment();
            allowedHere.increment();
            if (record.getValue().sendAt() != null) {
                HELD_DELIVERED.increment();
            }
        }

        @Override
        public <X> void collect(OutputTag<X> tag, StreamRecord<X> record) {
            if (record.getValue() instanceof io.freqcap.schema.decision.AuditEvent a && a.held()) {
                HELD_NOTICES.increment();
                return;
            }
            audited.increment();
        }

        @Override
        public void emitWatermark(Watermark mark) {}

        @Override
        public void emitWatermarkStatus(WatermarkStatus status) {}

        @Override
        public void emitLatencyMarker(LatencyMarker marker) {}

        @Override
        public void emitRecordAttributes(RecordAttributes attributes) {}

        @Override
        public void emitWatermark(WatermarkEvent event) {}

        @Override
        public void close() {}
    }
}
