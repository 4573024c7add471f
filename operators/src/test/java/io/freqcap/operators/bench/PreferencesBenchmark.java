package io.freqcap.operators.bench;

import io.freqcap.schema.Records;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.message.RawRecord;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Random;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the user's say and the sender's word cost (issue 40), in the capping operator over RocksDB,
 * one instance, the same traffic back to back:
 *
 * <ul>
 *   <li><b>without</b>: N users' messages over a week (push, email, sms; the rolling config of
 *       {@link CappingBenchmark}), no preferences;
 *   <li><b>preferences</b>: the same, after 10% of the users got preferences (a third an SMS
 *       opt-out, a third a pause until the middle of the week, a third their own limits: one email
 *       a day, five messages in 7 days); decisions/s of the messages, and the state bytes per user
 *       with preferences (RocksDB SST bytes after a checkpoint's flush, against the run without);
 *   <li><b>receipts</b>: the same without preferences, 5% of the ALLOWED messages followed at once
 *       by a {@code failed} receipt; messages per second, the receipts' time included.
 * </ul>
 *
 * Goals: preferences ≥ 85% of without, receipts ≥ 90%. Then a flood: one user's 100,000 preference
 * records (opt-outs and pauses, each a higher version) against the time a message takes, for a user
 * without held messages and for one with 100 waiting (the default {@code maxHeld}).
 *
 * <p>Run: {@code mvn -q -pl operators exec:exec@preferences [-Dbench.prefUsers=1000000]
 * [-Dbench.prefMessages=3000000] [-Dbench.rounds=3] [-Dbench.tmpdir=/dev/shm]}; the flood alone:
 * {@code -Dbench.only=flood}.
 */
public final class PreferencesBenchmark {
    static final String CONFIG =
            "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\","
                    + "\"max\":3},{\"window\":\"7d\",\"max\":10}],\"channels\":{\"email\":"
                    + "[{\"window\":\"1d\",\"max\":1}]}}]}";

    static final long START = Instant.parse("2025-11-17T00:00:00Z").toEpochMilli();
    static final long WEEK = 7 * 86_400_000L;
    static final String[] CHANNELS = {"push", "push", "email", "sms"};

    private static final String TMP = System.getProperty("java.io.tmpdir");

    record Result(double perSecond, long sstBytes, long allowed, long audited, long receipts) {}

    enum Mode {
        WITHOUT,
        PREFERENCES,
        RECEIPTS
    }

    public static void main(String[] args) throws Exception {
        int users = Integer.getInteger("bench.users", 1_000_000);
        int messages = Integer.getInteger("bench.messages", 3_000_000);
        int rounds = Integer.getInteger("bench.rounds", 3);
        System.out.printf(
                "%,d users, %,d messages over a week, one capping instance on RocksDB%n",
                users, messages);
        boolean floodOnly = "flood".equals(System.getProperty("bench.only"));
        for (int round = 0; round <= rounds && !floodOnly; round++) {
            // alternate which runs first, so that drift favours neither
            Result without;
            Result prefs;
            Result receipts;
            if (round % 2 == 0) {
                without = run(Mode.WITHOUT, users, messages);
                prefs = run(Mode.PREFERENCES, users, messages);
                receipts = run(Mode.RECEIPTS, users, messages);
            } else {
                receipts = run(Mode.RECEIPTS, users, messages);
                prefs = run(Mode.PREFERENCES, users, messages);
                without = run(Mode.WITHOUT, users, messages);
            }
            System.out.printf(
                    "%s: without %,.0f decisions/s (allowed %,d); with preferences %,.0f (%.0f%%,"
                            + " allowed %,d); with receipts %,.0f (%.0f%%, %,d receipts); state"
                            + " bytes per user with preferences %.0f%n",
                    round == 0 ? "warm-up (not counted)" : "round " + round,
                    without.perSecond(),
                    without.allowed(),
                    prefs.perSecond(),
                    100 * prefs.perSecond() / without.perSecond(),
                    prefs.allowed(),
                    receipts.perSecond(),
                    100 * receipts.perSecond() / without.perSecond(),
                    receipts.receipts(),
                    (prefs.sstBytes() - without.sstBytes()) / (users / 10.0));
        }
        for (int round = 0; round <= rounds; round++) {
            double[] none = flood(100_000, 1);
            double[] hundred = flood(100_000, 101);
            System.out.printf(
                    "%s: one user's preference flood %.2f us a record (a message of another user"
                            + " %.2f us); with 100 held messages waiting %.2f us (a message %.2f"
                            + " us)%n",
                    round == 0 ? "flood warm-up (not counted)" : "flood round " + round,
                    none[0],
                    none[1],
                    hundred[0],
                    hundred[1]);
        }
    }

    /** Microseconds per preference record of one user's flood, and per message for comparison. */
    static double[] flood(int records, int held) throws Exception {
        // one a minute, held up to half a day: the user's messages wait a minute apart
        String config =
                "{\"version\":1,\"rules\":[{\"segment\":\"*\",\"limits\":[{\"window\":\"1m\","
                        + "\"max\":1},{\"window\":\"1d\",\"max\":1000}],\"hold\":\"12h\"}]}";
        try (var instance = new CappingBenchmark.Instance(TMP, "freqcap-prefs-flood", config)) {
            var h = instance.h;
            h.setProcessingTime(START);
            for (int i = 0; i < held; i++) {
                h.processElement(message(7, "h-" + i, "push", START, i), START);
            }
            long delivered = instance.delivered.sum();
            check(delivered == 1 && instance.audited.sum() == 0, "held " + delivered);
            long t0 = System.nanoTime();
            for (int n = 0; n < records; n++) {
                String json =
                        "{\"userId\":7,\"version\":"
                                + (n + 1)
                                + (n % 2 == 0
                                        ? ",\"optOut\":{\"channels\":[\"sms\"]}}"
                                        : ",\"pausedUntil\":" + START + "}");
                h.processElement(Records.preference(7L, json, n), START);
            }
            double perRecord = (System.nanoTime() - t0) / 1e3 / records;
            check(
                    instance.audited.sum() == 0,
                    "nothing cancelled: held push messages after the pause");
            // messages of other users, for the comparison
            long t1 = System.nanoTime();
            for (int n = 0; n < records; n++) {
                h.processElement(message(1000 + n, "m-" + n, "push", START, n), START);
            }
            return new double[] {perRecord, (System.nanoTime() - t1) / 1e3 / records};
        }
    }

    static Result run(Mode mode, int users, int messages) throws Exception {
        try (var instance = new CappingBenchmark.Instance(TMP, "freqcap-prefs-bench", CONFIG)) {
            var h = instance.h;
            LongAdder delivered = instance.delivered;
            LongAdder audited = instance.audited;
            h.setProcessingTime(START + WEEK);
            if (mode == Mode.PREFERENCES) {
                for (long u = 0; u < users; u += 10) {
                    h.processElement(preference(u), START);
                }
                h.snapshot(0, START);
            }
            long audits = audited.sum();
            Random rnd = new Random(7);
            long receipts = 0;
            long t0 = System.nanoTime();
            for (int n = 0; n < messages; n++) {
                long user = rnd.nextInt(users);
                long t = START + (long) n * WEEK / messages;
                long before = delivered.sum();
                h.processElement(message(user, "m-" + n, CHANNELS[n & 3], t, n), t);
                if (mode == Mode.RECEIPTS && n % 20 == 0 && delivered.sum() > before) {
                    h.processElement(Records.failed("m-" + n, user, n), t);
                    receipts++;
                }
                if ((n + 1) % 500_000 == 0) {
                    h.snapshot(n, t); // as a job checkpoints: the cache's histories to RocksDB
                }
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            check(audited.sum() - audits + delivered.sum() == messages, "one output each");
            h.snapshot(messages, START + WEEK); // flushes the memtables to SST files
            return new Result(
                    messages / seconds,
                    CappingBenchmark.sstBytes(instance.dir),
                    delivered.sum(),
                    audited.sum() - audits,
                    receipts);
        }
    }

    /** A third an SMS opt-out, a third a pause to mid-week, a third limits of their own. */
    static InboundMessage preference(long user) {
        String json =
                switch ((int) (user / 10 % 3)) {
                    case 0 ->
                            "{\"userId\":"
                                    + user
                                    + ",\"version\":1,\"optOut\":{\"channels\":[\"sms\"]}}";
                    case 1 ->
                            "{\"userId\":"
                                    + user
                                    + ",\"version\":1,\"pausedUntil\":"
                                    + (START + WEEK / 2)
                                    + "}";
                    default ->
                            "{\"userId\":"
                                    + user
                                    + ",\"version\":1,\"limits\":[{\"window\":\"7d\",\"max\":5}],"
                                    + "\"channels\":{\"email\":[{\"window\":\"1d\",\"max\":1}]}}";
                };
        return Records.preference(user, json, user);
    }

    static final byte[] VALUE =
            ("{\"messageId\":\"m-0\",\"userId\":0,\"channel\":\"push\",\"timestamp\":0,"
                            + "\"payload\":{\"title\":\"20% off this weekend\"}}")
                    .getBytes(StandardCharsets.UTF_8);

    static InboundMessage message(long user, String id, String channel, long t, long offset) {
        return InboundMessage.parsed(
                new OutboundMessage(id, user, channel, "marketing", t, null, null, 0),
                new RawRecord(null, VALUE, "outbound-messages", 0, offset));
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("benchmark broken: " + what);
        }
    }
}
