package io.freqcap.operators.bench;

import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.message.RawRecord;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Comparator;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.LongStream;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;

/**
 * What a preemption costs against a release (issue 39: "a preemption costs no more than a release,
 * state work per preempted message"), in the capping operator over RocksDB, one instance: each of N
 * users has a promotion (priority 10) held from 22:00 for the end of quiet hours at 08:00 (one a
 * calendar day, hold 12h). Then, each phase on its own operator with that state:
 *
 * <ul>
 *   <li><b>release</b>: the clock reaches 08:00, every promotion is delivered (a timer, a point
 *       read and a delete each);
 *   <li><b>preempt</b>: a price alert (priority 80) per user at 23:00 takes the promotion's place:
 *       it ends PREEMPTED (its timer and state deleted, its history entry un-counted) and the alert
 *       is held for 08:00;
 *   <li><b>hold a second</b>: the same alert under two a day: held for 08:00 beside the promotion,
 *       nothing taken (the decision preemption does, without the preemption);
 *   <li><b>reject</b>: the same alert without {@code preempt}: REJECTED, nothing written.
 * </ul>
 *
 * A preemption's own work is preempt minus hold-a-second, to be set against a release.
 *
 * <p>Run: {@code mvn -q -pl operators exec:exec@preemption [-Dbench.users=200000]
 * [-Dbench.rounds=3] [-Dbench.tmpdir=/dev/shm]}.
 */
public final class PreemptionBenchmark {
    static final String RULE =
            "{\"segment\":\"*\",\"limits\":[{\"calendar\":\"day\",\"max\":%d}],\"hold\":\"12h\","
                    + "\"quietHours\":{\"from\":\"21:00\",\"to\":\"08:00\"}%s}";

    static String config(int perDay, boolean preempt) {
        return "{\"version\":1,\"rules\":["
                + String.format(RULE, perDay, preempt ? ",\"preempt\":true" : "")
                + "]}";
    }

    static final long NIGHT = Instant.parse("2025-11-22T22:00:00Z").toEpochMilli();
    static final long LATE = Instant.parse("2025-11-22T23:00:00Z").toEpochMilli();
    static final long MORNING = Instant.parse("2025-11-23T08:00:00Z").toEpochMilli();

    static final byte[] VALUE =
            ("{\"messageId\":\"m-0\",\"userId\":0,\"channel\":\"push\",\"campaignId\":\"promo\","
                            + "\"timestamp\":0,\"payload\":{\"title\":\"20% off this weekend\"}}")
                    .getBytes(StandardCharsets.UTF_8);

    private static final String TMP = System.getProperty("java.io.tmpdir");

    public static void main(String[] args) throws Exception {
        int users = Integer.getInteger("bench.users", 200_000);
        int rounds = Integer.getInteger("bench.rounds", 3);
        System.out.printf("%,d users, each with a promotion held for 08:00%n", users);
        long[] byUser = LongStream.range(0, users).toArray();
        // The order RocksDB keeps the users' state in (key group, then userId), which is the
        // order timers release them in: what a release reads, it reads in order.
        long[] byState =
                LongStream.range(0, users)
                        .boxed()
                        .sorted(
                                Comparator.comparingInt(
                                                (Long u) ->
                                                        KeyGroupRangeAssignment.assignToKeyGroup(
                                                                u, 128))
                                        .thenComparingLong(u -> u))
                        .mapToLong(u -> u)
                        .toArray();
        if ("preempt".equals(System.getProperty("bench.only"))) {
            // the preempting phase alone, for a profiler (-Dbench.order=state: in state order)
            long[] order = "state".equals(System.getProperty("bench.order")) ? byState : byUser;
            for (int round = 0; round <= rounds; round++) {
                System.out.printf(
                        "alert preempting %.2f us%n", alerts(order, config(1, true), users, 0));
            }
            return;
        }
        for (int round = 0; round <= rounds; round++) {
            double release = release(users);
            double preempt = alerts(byUser, config(1, true), users, 0);
            double holdSecond = alerts(byUser, config(2, true), 0, 0);
            double reject = alerts(byUser, config(1, false), 0, users);
            double preemptInOrder = alerts(byState, config(1, true), users, 0);
            double holdInOrder = alerts(byState, config(2, true), 0, 0);
            System.out.printf(
                    "%s: per message, release %.2f us; alerts in user order: preempting %.2f us,"
                            + " held beside %.2f us, rejected %.2f us, preemption's own work"
                            + " %.2f us (%.0f%% of a release); in state order: preempting %.2f"
                            + " us, held beside %.2f us, own work %.2f us (%.0f%%)%n",
                    round == 0 ? "warm-up (not counted)" : "round " + round,
                    release,
                    preempt,
                    holdSecond,
                    reject,
                    preempt - holdSecond,
                    100 * (preempt - holdSecond) / release,
                    preemptInOrder,
                    holdInOrder,
                    preemptInOrder - holdInOrder,
                    100 * (preemptInOrder - holdInOrder) / release);
        }
    }

    /** Microseconds per release of the users' held promotions. */
    static double release(int users) throws Exception {
        return withPromotions(
                users,
                config(1, true),
                (h, delivered, audited) -> {
                    long t0 = System.nanoTime();
                    h.setProcessingTime(MORNING);
                    double us = (System.nanoTime() - t0) / 1e3 / users;
                    check(delivered.sum() == users, delivered.sum() + " released");
                    return us;
                });
    }

    /**
     * Microseconds per alert decided at 23:00 under {@code config}, one per user in this order.
     *
     * @param preempted how many PREEMPTED and REJECTED audit records must come of them
     */
    static double alerts(long[] users, String config, int preempted, int rejected)
            throws Exception {
        return withPromotions(
                users.length,
                config,
                (h, delivered, audited) -> {
                    h.setProcessingTime(LATE);
                    long t0 = System.nanoTime();
                    for (long u : users) {
                        h.processElement(message(u, "alert-" + u, LATE, 80), LATE);
                    }
                    double us = (System.nanoTime() - t0) / 1e3 / users.length;
                    check(audited.sum() == preempted + rejected, audited.sum() + " audit records");
                    check(delivered.sum() == 0, "nothing delivered before 08:00");
                    return us;
                });
    }

    interface Phase {
        double run(
                KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> h,
                LongAdder delivered,
                LongAdder audited)
                throws Exception;
    }

    /** An operator under {@code config} whose users each have a promotion held, then a phase. */
    static double withPromotions(int users, String config, Phase phase) throws Exception {
        try (var instance = new CappingBenchmark.Instance(TMP, "freqcap-preempt-bench", config)) {
            var h = instance.h;
            h.setProcessingTime(NIGHT);
            for (int u = 0; u < users; u++) {
                h.processElement(message(u, "promo-" + u, NIGHT, 10), NIGHT);
            }
            check(
                    instance.delivered.sum() == 0 && instance.audited.sum() == 0,
                    "every promotion held");
            // as a job checkpoints: what the cache holds goes to RocksDB first
            h.snapshot(1, NIGHT);
            return phase.run(h, instance.delivered, instance.audited);
        }
    }

    static InboundMessage message(long user, String id, long t, int priority) {
        return InboundMessage.parsed(
                new OutboundMessage(id, user, "push", "marketing", t, null, "promo", priority),
                new RawRecord(null, VALUE, "outbound-messages", 0, 0));
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("benchmark broken: " + what);
        }
    }
}
