package io.freqcap.operators.bench;

import io.freqcap.operators.capping.rule.RuleStep;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.history.EncodedHistory;
import io.freqcap.schema.history.StoredHistorySerializer;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.history.UserHistorySerializer;
import io.freqcap.schema.message.OutboundMessage;
import java.util.Arrays;
import java.util.Random;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * What the capping operator does per message in plain Java, without Flink or RocksDB: read the
 * user's serialized history, decide (rules and shadow), count an ALLOWED message, write the history
 * back serialized, and at every checkpoint hand each changed history's bytes to the state
 * serializer as they are (the flush to keyed state). {@link CappingBenchmark}'s traffic and
 * configs, one thread, the rolling and the calendar workload alternating, so that the two are
 * compared back to back without RocksDB's and the disk's noise; nanoseconds per message, the best
 * of each workload's rounds.
 *
 * <p>Run: {@code mvn -q -pl operators exec:exec@decision-path} ({@code -Dbench.pathUsers}, {@code
 * -Dbench.pathMessages}, {@code -Dbench.rounds}; {@code -Dbench.only=calendar} or {@code rolling}
 * runs one workload, {@code -Dbench.config=<json>} decides the calendar traffic under another
 * config).
 */
public final class DecisionPathBenchmark {
    private DecisionPathBenchmark() {}

    public static void main(String[] args) throws Exception {
        int users = Integer.getInteger("bench.pathUsers", 500_000);
        int messages = Integer.getInteger("bench.pathMessages", 2_500_000);
        int rounds = Integer.getInteger("bench.rounds", 5);
        int days = 10;
        String only = System.getProperty("bench.only", "");
        Workload rolling = new Workload(users, messages, days, false);
        Workload calendar = new Workload(users, messages, days, true);
        long[] best = {Long.MAX_VALUE, Long.MAX_VALUE};
        for (int r = 0; r < rounds; r++) {
            // -Dbench.only=calendar or rolling: one workload (a profile of it)
            long a = only.equals("calendar") ? Long.MAX_VALUE : rolling.run();
            long b = only.equals("rolling") ? Long.MAX_VALUE : calendar.run();
            best[0] = Math.min(best[0], a);
            best[1] = Math.min(best[1], b);
            System.out.printf(
                    "round %d: rolling %.0f ns/message, calendar %.0f ns/message (%d and %d"
                            + " allowed)%n",
                    r + 1,
                    (double) a / messages,
                    (double) b / messages,
                    rolling.allowed,
                    calendar.allowed);
        }
        System.out.printf(
                "best: rolling %.0f ns/message, calendar %.0f ns/message, ratio %.0f%%%n",
                (double) best[0] / messages,
                (double) best[1] / messages,
                100.0 * best[0] / best[1]);
    }

    /** One workload's messages, generated once, decided afresh by each {@link #run}. */
    private static final class Workload {
        private final LimitConfig config;
        private final OutboundMessage[] messages;
        private final byte[][] histories;
        private final boolean[] dirty;
        private final int[] dirtyUsers;
        private long allowed;

        Workload(int users, int count, int days, boolean calendar) throws Exception {
            // -Dbench.config=<json>: the calendar traffic under another config (what a part costs)
            String given = System.getProperty("bench.config", "");
            this.config =
                    LimitConfig.parse(
                            !calendar
                                    ? CappingBenchmark.CONFIG
                                    : given.isBlank()
                                            ? CappingBenchmark.CALENDAR_CONFIG
                                            : CappingBenchmark.named(given));
            Random rnd = new Random(42);
            double step = (double) days * io.freqcap.schema.Instants.DAY / count;
            messages = new OutboundMessage[count];
            for (int i = 0; i < count; i++) {
                int user = rnd.nextInt(users);
                long time = CappingBenchmark.START + (long) (i * step) + rnd.nextInt(3_600_000);
                messages[i] =
                        new OutboundMessage(
                                "m-" + i,
                                user,
                                "push",
                                calendar && i % 5 == 0 ? "promo" : "marketing",
                                time,
                                calendar ? CappingBenchmark.ZONES[user & 3] : null,
                                calendar ? "c" + (i % 20) : null,
                                0);
            }
            histories = new byte[users][];
            dirty = new boolean[users];
            dirtyUsers = new int[users];
        }

        /** Decides every message; returns the nanoseconds it took. */
        long run() throws Exception {
            Arrays.fill(histories, null);
            Arrays.fill(dirty, false);
            int dirtyCount = 0;
            allowed = 0;
            DataInputDeserializer in = new DataInputDeserializer();
            DataOutputSerializer out = new DataOutputSerializer(256);
            UserHistorySerializer s = UserHistorySerializer.INSTANCE;
            long t0 = System.nanoTime();
            for (int i = 0; i < messages.length; i++) {
                // Fresh strings, as parsing a record gives: no hash or equality known ahead.
                OutboundMessage m = fresh(messages[i]);
                int user = (int) m.userId();
                UserHistory h = UserHistory.EMPTY;
                if (histories[user] != null) {
                    in.setBuffer(histories[user]);
                    h = s.deserialize(in);
                }
                RuleStep.Result v = RuleStep.decide(h, m, config, LimitConfig.DEFAULT_SEGMENT);
                if (v.decision() == Decision.ALLOWED) {
                    allowed++;
                    out.clear();
                    s.serialize(v.history(), out);
                    histories[user] = out.getCopyOfBuffer();
                    if (!dirty[user]) {
                        dirty[user] = true;
                        dirtyUsers[dirtyCount++] = user;
                    }
                }
                if ((i + 1) % 100_000 == 0) {
                    // The flush: each changed history's bytes, as keyed state receives them.
                    for (int k = 0; k < dirtyCount; k++) {
                        int u = dirtyUsers[k];
                        out.clear();
                        StoredHistorySerializer.INSTANCE.serialize(
                                EncodedHistory.copyOf(histories[u], 0, histories[u].length), out);
                        dirty[u] = false;
                    }
                    dirtyCount = 0;
                }
            }
            return System.nanoTime() - t0;
        }

        private OutboundMessage fresh(OutboundMessage m) {
            return new OutboundMessage(
                    new String(m.messageId()),
                    m.userId(),
                    new String(m.channel()),
                    new String(m.category()),
                    m.timestamp(),
                    m.timezone() == null ? null : new String(m.timezone()),
                    m.campaignId() == null ? null : new String(m.campaignId()),
                    0);
        }
    }
}
