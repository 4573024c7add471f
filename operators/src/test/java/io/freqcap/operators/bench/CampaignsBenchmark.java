package io.freqcap.operators.bench;

import io.freqcap.operators.capping.history.HistoryGrowth;
import io.freqcap.operators.capping.history.LongHistory;
import io.freqcap.operators.capping.rule.CappingRule;
import io.freqcap.operators.capping.rule.DistinctCampaignsOracle;
import io.freqcap.operators.capping.rule.Judging;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.OutboundMessage;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Instant;
import java.util.Arrays;
import java.util.Random;

/**
 * What a {@code campaigns} limit costs a heavy user's decisions (issue 46: one user with 9,000
 * messages of campaign A and one of B in the week took ~1 s to reject each message of a campaign
 * C), in plain Java ({@link CappingRule#judge} and {@link HistoryGrowth}, as the operator decides;
 * no Flink, no RocksDB), one thread:
 *
 * <ul>
 *   <li><b>single</b>: one rejected decision of a campaign-C message, the rule having {@code
 *       campaigns} (7d, at most 2) and a {@code hold} of an hour (so its {@code retryAfter} is
 *       worked out, and lies past the hold), against a history of n − 1 messages of A over six days
 *       and one of B: microseconds per decision at each n of {@code -Dbench.sizes} (and the same
 *       with a calendar week, rejected until the next Monday); and the same limits' answers
 *       (violations, then the earliest passing time) from {@link DistinctCampaignsOracle}, the
 *       algorithm before issue 46, at the same n, unless {@code -Dbench.oracle=false}. The growth
 *       from one n to the next tells n log n from n².
 *   <li><b>heavy</b>: everyone's decisions per second, N ordinary users' messages over the last day
 *       of that week (campaigns c0..c19) under the same rule, with and without the heavy user
 *       (9,000 messages of A and one of B in the six days before) receiving a stream of campaign-C
 *       messages interleaved with them; alternating, the ratio per pair, by the clock and by the
 *       deciding thread's CPU time. Goal: with ≥ 50% of without.
 *   <li><b>interleaved</b> (issue 58): a late message of campaign C on push under a rule with a
 *       {@code 2s} push limit and a {@code 4s} campaigns limit (max 1 each), the history
 *       alternating C on push and A on email 5 s apart, so that the times the push limit passes and
 *       those the campaigns limit passes interleave over the whole history: microseconds per
 *       decision at each n of {@code -Dbench.interleavedSizes} (8,000, 16,000, 32,000), and the
 *       same answer worked out as before issue 58 (each side's earliest time from the other's,
 *       round after round) unless {@code -Dbench.oracle=false}.
 * </ul>
 *
 * <p>Run: {@code mvn -q -pl operators exec:exec@campaigns [-Dbench.campaignUsers=100000]
 * [-Dbench.campaignMessages=200000] [-Dbench.heavyEntries=9000] [-Dbench.heavyMessages=200]
 * [-Dbench.rounds=9]}; one part: {@code -Dbench.only=single}, {@code heavy} or {@code interleaved}.
 * The heavy part runs {@code -Dbench.warmup=2} pairs first, not counted.
 */
public final class CampaignsBenchmark {
    static final String CONFIG =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\","
                    + "\"max\":2000},{\"window\":\"7d\",\"max\":20000}],"
                    + "\"campaigns\":[{\"window\":\"7d\",\"max\":2}],\"hold\":\"1h\"}]}";

    /** The same with a calendar week (in UTC) for the campaigns limit. */
    static final String CALENDAR_CONFIG =
            CONFIG.replace("{\"window\":\"7d\",\"max\":2}", "{\"calendar\":\"week\",\"max\":2}");

    /** A Monday: the heavy user's week starts here. */
    static final long START = Instant.parse("2025-11-17T00:00:00Z").toEpochMilli();

    static final long DAY = 86_400_000L;

    public static void main(String[] args) throws Exception {
        String only = System.getProperty("bench.only", "");
        LimitConfig config = LimitConfig.parse(CONFIG);
        if (only.isEmpty() || only.equals("interleaved")) {
            boolean oracle = !"false".equals(System.getProperty("bench.oracle"));
            for (String s :
                    System.getProperty("bench.interleavedSizes", "8000,16000,32000").split(",")) {
                interleaved(Integer.parseInt(s.trim()), oracle);
            }
        }
        if (only.isEmpty() || only.equals("single")) {
            String sizes = System.getProperty("bench.sizes", "1000,10000");
            boolean oracle = !"false".equals(System.getProperty("bench.oracle"));
            LimitConfig calendar = LimitConfig.parse(CALENDAR_CONFIG);
            for (LimitConfig c : new LimitConfig[] {config, calendar}) {
                for (String s : sizes.split(",")) {
                    single(c, Integer.parseInt(s.trim()), oracle);
                }
            }
        }
        if (only.isEmpty() || only.equals("heavy")) {
            heavy(config);
        }
    }

    /**
     * A history of {@code n - 1} messages of campaign A evenly over six days from {@link #START}
     * and one of B on the third day, as the job keeps one that long.
     */
    static CountedHistory heavyHistory(int n) {
        long[] ts = new long[n];
        String[] campaigns = new String[n];
        long step = 6 * DAY / n;
        for (int i = 0; i < n; i++) {
            ts[i] = START + i * step;
            campaigns[i] = i == n / 3 ? "B" : "A";
        }
        long[] fps = new long[n];
        for (int i = 0; i < n; i++) {
            fps[i] = i + 1;
        }
        UserHistory h =
                UserHistory.entries(ts, fps, new int[n], new String[] {"push"})
                        .campaigns(campaigns)
                        .build();
        return n > HistoryGrowth.LONG_AT ? LongHistory.of(h, HistoryGrowth.BUCKET_MILLIS) : h;
    }

    static OutboundMessage campaignC(String id, long userId, long t) {
        return new OutboundMessage(id, userId, "push", "marketing", t, null, "C", 0);
    }

    private static void single(LimitConfig config, int n, boolean oracle) {
        CountedHistory h = heavyHistory(n);
        long t = START + 6 * DAY + 12 * 3_600_000L;
        OutboundMessage m = campaignC("c-0", 0, t);
        Verdict v = CappingRule.judge(h, m, Judging.of(config, "*"));
        if (v.decision() != Decision.REJECTED || v.retryAfter() == null) {
            throw new IllegalStateException("expected a rejection with retryAfter: " + v);
        }
        double perDecision = timed(() -> CappingRule.judge(h, m, Judging.of(config, "*")));
        var limits = config.ruleFor("*").caps().campaigns();
        String name = limits.get(0).isCalendar() ? "calendar week" : "7d";
        System.out.printf(
                "single %s n=%d: judge %.1f us/decision (REJECTED by %d, retryAfter t+%.2f days)%n",
                name,
                n,
                perDecision / 1000,
                ((Violation.Exceeded) v.violations().get(0)).count(),
                (v.retryAfter() - t) / (double) DAY);
        if (!oracle) {
            return;
        }
        DistinctCampaignsOracle first = DistinctCampaignsOracle.of(h, limits, "C", "UTC");
        Long old = first.earliest(t);
        if (first.violations(t).isEmpty() || !v.retryAfter().equals(old)) {
            throw new IllegalStateException("the oracle disagrees: " + old + " " + v);
        }
        double perOld =
                timed(
                        () -> {
                            DistinctCampaignsOracle o =
                                    DistinctCampaignsOracle.of(h, limits, "C", "UTC");
                            o.violations(t);
                            return o.earliest(t);
                        });
        System.out.printf(
                "single %s n=%d: before issue 46 (the oracle's violations and earliest) %.1f"
                        + " us/decision%n",
                name, n, perOld / 1000);
    }

    static final String INTERLEAVED_CONFIG =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"7d\","
                    + "\"max\":100000}],\"channels\":{\"push\":[{\"window\":\"2s\",\"max\":1}]},"
                    + "\"campaigns\":[{\"window\":\"4s\",\"max\":1}]}]}";

    /**
     * n entries: C on push at 10 s steps, A on email 5 s after each. The push limit passes 2 to 8 s
     * after a C, the campaigns limit only 9 to 11 s after one: never both within the history.
     */
    static CountedHistory interleavedHistory(int n) {
        long[] ts = new long[n];
        long[] fps = new long[n];
        int[] channel = new int[n];
        String[] campaigns = new String[n];
        for (int i = 0; i < n; i++) {
            ts[i] = START + (i / 2) * 10_000L + (i % 2) * 5_000L;
            fps[i] = i + 1;
            channel[i] = i % 2;
            campaigns[i] = i % 2 == 0 ? "C" : "A";
        }
        UserHistory h =
                UserHistory.entries(ts, fps, channel, new String[] {"push", "email"})
                        .campaigns(campaigns)
                        .build();
        return n > HistoryGrowth.LONG_AT ? LongHistory.of(h, HistoryGrowth.BUCKET_MILLIS) : h;
    }

    private static void interleaved(int n, boolean oracle) throws Exception {
        LimitConfig config = LimitConfig.parse(INTERLEAVED_CONFIG);
        CountedHistory h = interleavedHistory(n);
        OutboundMessage m =
                new OutboundMessage("late", 0, "push", "marketing", START + 1_000, null, "C", 0);
        Verdict v = CappingRule.judge(h, m, Judging.of(config, "*"));
        long last = START + (n - 1) / 2 * 10_000L + ((n - 1) % 2) * 5_000L;
        if (v.decision() != Decision.REJECTED || v.retryAfter() == null || v.retryAfter() < last) {
            throw new IllegalStateException("expected a retryAfter past the history: " + v);
        }
        double perDecision = timed(() -> CappingRule.judge(h, m, Judging.of(config, "*")));
        System.out.printf(
                "interleaved n=%d: judge %.1f us/decision (retryAfter %.1f s after the last entry)%n",
                n, perDecision / 1000, (v.retryAfter() - last) / 1000.0);
        if (!oracle) {
            return;
        }
        long t0 = System.nanoTime();
        Long old = DistinctCampaignsOracle.alternating(h, m, INTERLEAVED_CONFIG);
        double oldMicros = (System.nanoTime() - t0) / 1e3;
        if (!v.retryAfter().equals(old)) {
            throw new IllegalStateException("before issue 58 the answer was " + old + ": " + v);
        }
        System.out.printf(
                "interleaved n=%d: before issue 58 (each side in turn, one call) %.1f us/decision%n",
                n, oldMicros);
    }

    /** Where the timed calls' answers go, so that none is optimized away. */
    static volatile Object sink;

    /** Mean nanoseconds per call over at least a second (after as long a warm-up), ≥ 3 calls. */
    private static double timed(java.util.function.Supplier<Object> call) {
        long minNanos = Long.getLong("bench.minMillis", 1000) * 1_000_000L;
        for (long t0 = System.nanoTime(); System.nanoTime() - t0 < minNanos / 2; ) {
            sink = call.get();
        }
        int calls = 0;
        long t0 = System.nanoTime();
        long elapsed;
        do {
            sink = call.get();
            calls++;
            elapsed = System.nanoTime() - t0;
        } while (elapsed < minNanos || calls < 3);
        return (double) elapsed / calls;
    }

    private static void heavy(LimitConfig config) {
        int users = Integer.getInteger("bench.users", 100_000);
        int count = Integer.getInteger("bench.messages", 200_000);
        int heavyEntries = Integer.getInteger("bench.heavyEntries", 9_000);
        int heavyCount = Integer.getInteger("bench.heavyMessages", 200);
        int rounds = Integer.getInteger("bench.rounds", 9);
        // Ordinary users 1..users over the seventh day; the heavy user (0) every count/heavyCount
        // messages, at the same times.
        Random rnd = new Random(46);
        OutboundMessage[] without = new OutboundMessage[count];
        OutboundMessage[] with = new OutboundMessage[count + heavyCount];
        int every = heavyCount == 0 ? Integer.MAX_VALUE : Math.max(1, count / heavyCount);
        double step = (double) DAY / count;
        int k = 0;
        int heavySent = 0;
        for (int i = 0; i < count; i++) {
            long time = START + 6 * DAY + (long) (i * step) + rnd.nextInt(600_000);
            without[i] =
                    new OutboundMessage(
                            "m-" + i,
                            1 + rnd.nextInt(users),
                            "push",
                            "marketing",
                            time,
                            null,
                            "c" + rnd.nextInt(20),
                            0);
            with[k++] = without[i];
            if (i % every == every - 1 && heavySent < heavyCount) {
                with[k++] = campaignC("h-" + heavySent++, 0, time);
            }
        }
        with = Arrays.copyOf(with, k);
        CountedHistory heavyHistory = heavyHistory(heavyEntries + 1);
        System.out.printf(
                "heavy: %d users, %d messages over a day; with the heavy user (%d entries of A, 1"
                        + " of B): %d of campaign C among them%n",
                users, count, heavyEntries, heavySent);
        // Pairs not counted, while the JIT settles (the first rounds ran at a third of the rate).
        int warmup = Integer.getInteger("bench.warmup", 2);
        for (int r = 0; r < warmup; r++) {
            run(config, without, users, null);
            run(config, with, users, heavyHistory);
        }
        double[] ratios = new double[rounds];
        double[] cpuRatios = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            // Alternate which goes first, so neither always runs on a warmer JVM.
            Run a;
            Run b;
            if (r % 2 == 0) {
                a = run(config, without, users, null);
                b = run(config, with, users, heavyHistory);
            } else {
                b = run(config, with, users, heavyHistory);
                a = run(config, without, users, null);
            }
            ratios[r] = b.perSecond / a.perSecond;
            cpuRatios[r] = b.perCpuSecond / a.perCpuSecond;
            System.out.printf(
                    "round %d: without %,.0f decisions/s (%,.0f per CPU second, %d allowed), with"
                            + " %,.0f decisions/s (%,.0f per CPU second, %d allowed, heavy user's:"
                            + " %d REJECTED), %.0f%% (per CPU second %.0f%%)%n",
                    r + 1,
                    a.perSecond,
                    a.perCpuSecond,
                    a.allowed,
                    b.perSecond,
                    b.perCpuSecond,
                    b.allowed,
                    b.heavyRejected,
                    100 * ratios[r],
                    100 * cpuRatios[r]);
        }
        System.out.printf(
                "heavy: with / without %s; per CPU second %s (goal >= 50%%)%n",
                spread(ratios), spread(cpuRatios));
    }

    /** Lowest, highest and median, in percent. */
    private static String spread(double[] ratios) {
        double[] sorted = ratios.clone();
        Arrays.sort(sorted);
        return String.format(
                "%.0f%%-%.0f%%, median %.0f%%",
                100 * sorted[0], 100 * sorted[sorted.length - 1], 100 * sorted[sorted.length / 2]);
    }

    record Run(double perSecond, double perCpuSecond, long allowed, long heavyRejected) {}

    /** Decides every message from empty histories (the heavy user's given), counting ALLOWED. */
    private static Run run(
            LimitConfig config, OutboundMessage[] messages, int users, CountedHistory heavy) {
        CountedHistory[] histories = new CountedHistory[users + 1];
        Arrays.fill(histories, UserHistory.EMPTY);
        if (heavy != null) {
            histories[0] = heavy;
        }
        long allowed = 0;
        long heavyRejected = 0;
        // This thread's CPU time as well: this machine's other load moves it less than the clock.
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long cpu0 = threads.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        for (OutboundMessage m : messages) {
            int user = (int) m.userId();
            Verdict v = CappingRule.judge(histories[user], m, Judging.of(config, "*"));
            if (v.decision() == Decision.ALLOWED) {
                allowed++;
                long countedAt = v.isHeld() ? v.sendAt() : m.timestamp();
                histories[user] = HistoryGrowth.grown(histories[user], m, countedAt, false, config);
            } else if (user == 0 && v.decision() == Decision.REJECTED) {
                heavyRejected++;
            }
        }
        long nanos = System.nanoTime() - t0;
        long cpu = threads.getCurrentThreadCpuTime() - cpu0;
        return new Run(
                messages.length * 1e9 / nanos, messages.length * 1e9 / cpu, allowed, heavyRejected);
    }
}
