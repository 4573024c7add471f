package io.freqcap.operators.capping;

import static io.freqcap.operators.capping.CappingHarnesses.audits;
import static io.freqcap.schema.Instants.DAY_1_NOON;
import static io.freqcap.schema.Instants.MINUTE;
import static io.freqcap.schema.Instants.SECOND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.freqcap.operators.ingest.MessageTime;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The sweep never over-admits: the capping operator (Flink's harness, RocksDB) with the job's own
 * event time ({@link MessageTime.Generator} on a simulated wall clock) and frequent sweeps, fed
 * partitions that lag by random skews, fall idle and wake up behind, and forward-dated messages, is
 * compared message by message with a brute-force oracle of contract.md §6 that never forgets: every
 * decision is the oracle's, or STALE (the job could not know), and never ALLOWED where the oracle
 * says REJECTED.
 *
 * <p>Timestamps and windows are whole seconds, so the oracle checking every interval start on the
 * second checks every start.
 */
class SweepPropertyTest {
    static final long SEED = 20261125L;
    static final String[] WINDOWS = {"1m", "5m", "10m", "30m", "1h"};

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    /** What the runs went through, so that a test that exercised nothing cannot pass. */
    static final class Tally {
        int decided;
        int staleInsteadOfDecided;
        int rejected;
        int sweptHistories;
        int decidedAfterASweepCleared;
    }

    @Test
    void skewedIdleAndForwardDatedPartitionsNeverMakeTheSweepOverAdmit() throws Exception {
        Random rnd = new Random(SEED);
        Tally tally = new Tally();
        for (int run = 0; run < 30; run++) {
            runOnce(run, rnd, tally);
        }
        System.out.printf(
                "sweep property: %d decided, %d rejected, %d STALE where the oracle decided,"
                        + " %d histories swept, %d decided after a sweep had cleared something%n",
                tally.decided,
                tally.rejected,
                tally.staleInsteadOfDecided,
                tally.sweptHistories,
                tally.decidedAfterASweepCleared);
        assertTrue(tally.rejected > 200, "the limits bit: " + tally.rejected);
        assertTrue(tally.sweptHistories > 100, "sweeps cleared histories");
        assertTrue(tally.staleInsteadOfDecided > 0, "some messages came too late to decide");
        assertTrue(
                tally.decidedAfterASweepCleared > tally.decided / 10,
                "most decisions still exact after sweeps: " + tally.decidedAfterASweepCleared);
    }

    private void runOnce(int run, Random rnd, Tally tally) throws Exception {
        String config = randomConfig(rnd);
        LimitConfig cfg = LimitConfig.parse(config);
        var h = harnesses.open(CappingSettings.of(cfg), null, 1, 0);
        long[] now = {DAY_1_NOON};
        MessageTime.Generator time = new MessageTime.Generator(() -> now[0]);
        Marks marks = new Marks();

        int partitions = 2 + rnd.nextInt(3);
        int users = 12;
        long[] lag = new long[partitions]; // how far each partition's producer is behind
        long[] idleUntil = new long[partitions];
        List<List<Long>> counted = new ArrayList<>();
        for (int u = 0; u < users; u++) {
            counted.add(new ArrayList<>());
        }
        long offset = 0;
        boolean clearedSomething = false;
        java.util.Set<Integer> holding = new java.util.HashSet<>(); // users with a history
        int steps = 300 + rnd.nextInt(200);
        for (int step = 0; step < steps; step++) {
            now[0] += rnd.nextInt(40) * SECOND;
            int p = rnd.nextInt(partitions);
            if (rnd.nextInt(40) == 0) {
                // A producer falls behind (an outage, then its backlog) or catches up.
                lag[p] = rnd.nextBoolean() ? 0 : rnd.nextInt(4 * 60) * MINUTE;
            }
            if (rnd.nextInt(60) == 0) {
                idleUntil[p] = now[0] + rnd.nextInt(30) * MINUTE; // quiet, then wakes up
            }
            if (now[0] >= idleUntil[p]) {
                int user = p + partitions * rnd.nextInt(Math.max(1, users / partitions));
                long t = now[0] - lag[p] - rnd.nextInt(120) * SECOND;
                if (rnd.nextInt(25) == 0) {
                    t = now[0] + rnd.nextInt(23 * 60) * MINUTE; // forward-dated, within a day
                }
                t = Math.max(0, t / SECOND * SECOND);
                String id = "r" + run + "-m" + step;
                InboundMessage in = message(id, user, t, p, offset++);
                time.onEvent(in, t, marks);
                int deliveriesBefore = h.extractOutputValues().size();
                int auditsBefore = audits(h).size();
                h.processElement(in, t);
                String job =
                        h.extractOutputValues().size() > deliveriesBefore
                                ? "ALLOWED"
                                : audits(h).get(auditsBefore).get("decision").asText();
                assertEquals(auditsBefore + (job.equals("ALLOWED") ? 0 : 1), audits(h).size());
                String oracle = oracle(cfg, counted.get(user), t);
                String where = "run " + run + " step " + step + " user " + user + " t " + t;
                if (job.equals("ALLOWED") && !oracle.equals("ALLOWED")) {
                    fail("over-admission: job ALLOWED, oracle " + oracle + " at " + where);
                }
                if (!job.equals("STALE") && !job.equals(oracle)) {
                    fail("job " + job + ", oracle " + oracle + " at " + where);
                }
                if (job.equals("STALE") && !oracle.equals("STALE")) {
                    tally.staleInsteadOfDecided++;
                }
                if (job.equals("ALLOWED")) {
                    counted.get(user).add(t);
                    holding.add(user);
                }
                tally.decided++;
                tally.rejected += job.equals("REJECTED") ? 1 : 0;
                tally.decidedAfterASweepCleared += clearedSomething && !job.equals("STALE") ? 1 : 0;
            }
            if (step % 5 == 0) {
                time.onPeriodicEmit(marks);
                if (marks.latest != Long.MIN_VALUE) {
                    h.watermark(marks.latest);
                }
            }
            if (rnd.nextInt(8) == 0) {
                // Keyed state is exact after a sweep (which writes the cache back first).
                h.processBroadcastElement(ControlRecord.sweep(step), 0);
                long cleared = holding.size();
                holding.removeIf(u -> !hasHistory(h, u));
                cleared -= holding.size();
                tally.sweptHistories += cleared;
                clearedSomething |= cleared > 0;
            }
        }
        for (int u = 0; u < users; u++) {
            assertNoIntervalOverfilled(cfg, counted.get(u));
        }
        harnesses.close(h);
    }

    static boolean hasHistory(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> h,
            int user) {
        try {
            return CappingFixtures.history(h, user) != null;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Contract §6 by brute force, over everything ever counted for the user. */
    static String oracle(LimitConfig cfg, List<Long> counted, long t) {
        long latest = counted.stream().mapToLong(Long::longValue).max().orElse(Long.MIN_VALUE);
        if (!counted.isEmpty() && t < latest - cfg.longestWindowMillis()) {
            return "STALE";
        }
        for (Limit l : cfg.ruleFor(LimitConfig.DEFAULT_SEGMENT).caps().all()) {
            long w = l.windowMillis();
            for (long s = t - w + SECOND; s <= t; s += SECOND) {
                long start = s;
                long n = counted.stream().filter(e -> e >= start && e < start + w).count();
                if (n + 1 > l.max()) {
                    return "REJECTED";
                }
            }
        }
        return "ALLOWED";
    }

    static void assertNoIntervalOverfilled(LimitConfig cfg, List<Long> counted) {
        for (Limit l : cfg.ruleFor(LimitConfig.DEFAULT_SEGMENT).caps().all()) {
            for (long s : counted) {
                long n = counted.stream().filter(e -> e >= s && e < s + l.windowMillis()).count();
                assertTrue(n <= l.max(), "interval at " + s + " holds " + n + " > " + l.max());
            }
        }
    }

    static String randomConfig(Random rnd) {
        StringBuilder limits = new StringBuilder();
        int n = 1 + rnd.nextInt(2);
        for (int i = 0; i < n; i++) {
            limits.append(i == 0 ? "" : ",")
                    .append("{\"window\":\"")
                    .append(WINDOWS[rnd.nextInt(WINDOWS.length)])
                    .append("\",\"max\":")
                    .append(1 + rnd.nextInt(3))
                    .append('}');
        }
        return "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[" + limits + "]}]}";
    }

    static InboundMessage message(String id, long user, long t, int partition, long offset) {
        String json =
                "{\"messageId\":\""
                        + id
                        + "\",\"userId\":"
                        + user
                        + ",\"channel\":\"push\",\"timestamp\":"
                        + t
                        + "}";
        return InboundMessage.of(
                new RawRecord(
                        null, json.getBytes(StandardCharsets.UTF_8), "in", partition, offset));
    }

    static final class Marks implements WatermarkOutput {
        long latest = Long.MIN_VALUE;

        @Override
        public void emitWatermark(Watermark w) {
            latest = Math.max(latest, w.getTimestamp());
        }

        @Override
        public void markIdle() {}

        @Override
        public void markActive() {}
    }
}
