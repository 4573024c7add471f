package io.freqcap.operators.capping;

import static io.freqcap.schema.Configs.rule;
import static io.freqcap.schema.Configs.version;
import static io.freqcap.schema.Configs.window;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.schema.Records;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.AuditEvent;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.mirror.MirrorLog;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One user with a history of more than 100,000 counted messages: every decision agrees with a
 * brute-force oracle (every interval start on the timestamps' grid), the history survives a
 * snapshot and restore, the mirror holds its whole log (one write per flush, and one on a rebuild),
 * and a sweep clears it.
 */
class HeavyUserTest {
    static final long GRID = 10_000; // every timestamp is on a 10 s grid, every window a multiple
    static final long T0 = 1_763_812_800_000L;
    static final long USER = 7;
    static final String CONFIG =
            version(1)
                    .rule(
                            rule("*", window("1h", 7000), window("8h", 60000))
                                    .channel("email", window("1h", 1700)))
                    .json();

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    InboundMessage message(String id, String channel, long t) {
        return Records.message(id, USER, t).channel(channel).inbound(harnesses.nextOffset());
    }

    @Test
    void aHundredThousandEntryHistoryIsDecidedExactlyRebuiltAndSwept() throws Exception {
        LimitConfig config = LimitConfig.parse(CONFIG);
        GridOracle oracle = new GridOracle(config);
        Random random = new Random(2026);
        var h = harnesses.openWithMirror(CONFIG, null);
        long t = T0;
        List<String> ids = new ArrayList<>();
        int largestHistory = 0;
        int rejected = 0;
        int checkedRetries = 0;
        int outOfOrder = 0;
        for (int i = 0; i < 150_000; i++) {
            if (random.nextInt(20) == 0) {
                t += GRID; // about 20 messages per grid step: 7,200 an hour
            }
            long at = t;
            String id = "m" + i;
            int dice = random.nextInt(1000);
            if (dice == 0 && !ids.isEmpty()) {
                id = ids.get(ids.size() - 1 - random.nextInt(Math.min(ids.size(), 5000)));
            } else if (dice == 1) {
                at = t - GRID * (1 + random.nextInt(720)); // up to 2 hours late
                outOfOrder++;
            } else if (dice == 2) {
                at = t - 9 * 3_600_000L; // older than latest minus the longest window
            }
            at = Math.max(T0, at);
            String channel = random.nextInt(4) == 0 ? "email" : "push";
            GridOracle.Result expected = oracle.decide(id, channel, at);
            h.processElement(message(id, channel, at), at);
            String actual = takeDecision(h);
            assertEquals(expected.decision(), actual, "message " + i + " at " + at);
            if (expected.decision().equals("ALLOWED")) {
                ids.add(id);
                assertEquals(List.of(), drainMirror(h), "the key is written at the next flush");
            }
            if (expected.decision().equals("REJECTED")) {
                JsonNode audit = lastAudit;
                assertEquals(expected.violations(), violations(audit), "message " + i);
                if (rejected++ % 401 == 0) {
                    assertEquals(oracle.retryAfter(channel, at), audit.get("retryAfter").asLong());
                    checkedRetries++;
                }
            }
            if (i % 1000 == 0) {
                largestHistory = Math.max(largestHistory, oracle.kept());
            }
            if (i % 10_000 == 0 || i == 90_000) {
                // A flush: the thousands counted since are one write of the user's whole log.
                CappingHarnesses.mirrored(h);
                assertEquals(List.of(oracle.log()), drainMirror(h), "message " + i);
            }
            if (i == 90_000) {
                OperatorSubtaskState snapshot = h.snapshot(1, 1);
                harnesses.close(h);
                h = harnesses.openWithMirror(CONFIG, snapshot);
            }
        }
        assertTrue(largestHistory > 100_000, "history of " + largestHistory + " entries");
        assertTrue(rejected > 1000 && checkedRetries > 10 && outOfOrder > 100);
        assertNull(history(h), "a long history is not kept in the short form");

        // Rebuild: the user's whole log, its counted messages of the last window, in one write.
        CappingHarnesses.mirrored(h);
        drainMirror(h);
        h.processBroadcastElement(
                CappingFunctionTest.control("{\"command\": \"rebuild-mirror\"}"), 0);
        List<MirrorWrite> writes = drainMirror(h);
        assertEquals(List.of(oracle.log()), writes);
        Map<String, Long> rebuilt = new HashMap<>();
        for (MirrorLog.Entry e : MirrorLog.decode(writes.get(0).log())) {
            rebuilt.put(e.messageId(), e.score());
        }
        assertEquals(oracle.countedSince(oracle.latest() - 8 * 3_600_000L), rebuilt);
        assertTrue(rebuilt.size() > 50_000, rebuilt.size() + " entries");
        assertEquals(oracle.latest() + 8 * 3_600_000L, writes.get(0).expireAt());

        // Sweep: once the watermark is twice the longest window past the latest, it is all gone.
        long latest = oracle.latest();
        h.watermark(latest + 16 * 3_600_000L - 1);
        h.processBroadcastElement(ControlRecord.sweep(1), 0);
        assertTrue(isLong(h), "kept while a message could still need it");
        assertTrue(buckets(h) > 90, buckets(h) + " buckets of 10 minutes over 16 hours");
        h.watermark(latest + 16 * 3_600_000L);
        h.processBroadcastElement(ControlRecord.sweep(2), 0);
        assertFalse(isLong(h));
        assertEquals(0, buckets(h), "no bucket left behind");
        String counted = ids.get(ids.size() - 1);
        long later = latest + 17 * 3_600_000L;
        h.processElement(message(counted, "push", later), later);
        assertEquals("ALLOWED", takeDecision(h), "cleared means forgotten: the id counts again");
    }

    private JsonNode lastAudit;

    /** The decision of the one output the last message made. */
    private String takeDecision(
            KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> h)
            throws Exception {
        Queue<Object> out = h.getOutput();
        Object o = out.poll();
        while (o != null && !(o instanceof StreamRecord<?>)) {
            o = out.poll(); // a watermark
        }
        if (o instanceof StreamRecord<?> r && r.getValue() instanceof Delivery d) {
            assertNull(out.poll(), "one output per message");
            return d.decision();
        }
        Queue<StreamRecord<AuditEvent>> audits = h.getSideOutput(CappingFunction.AUDIT);
        StreamRecord<AuditEvent> a = audits.poll();
        assertNull(audits.poll(), "one output per message");
        lastAudit = Json.MAPPER.readTree(a.getValue().json());
        return lastAudit.get("decision").asText();
    }

    private static List<MirrorWrite> drainMirror(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h) {
        List<MirrorWrite> out = new ArrayList<>();
        Queue<StreamRecord<MirrorWrite>> side = h.getSideOutput(CappingFunction.MIRROR);
        for (StreamRecord<MirrorWrite> r; side != null && (r = side.poll()) != null; ) {
            out.add(r.getValue());
        }
        return out;
    }

    private static List<String> violations(JsonNode audit) {
        List<String> out = new ArrayList<>();
        for (JsonNode v : audit.get("violations")) {
            out.add(
                    v.get("scope").asText()
                            + " "
                            + v.get("window").asText()
                            + " "
                            + v.get("max").asInt()
                            + " "
                            + v.get("count").asInt());
        }
        return out;
    }

    private static Object history(KeyedBroadcastOperatorTestHarness<Long, ?, ?, ?> h)
            throws Exception {
        return CappingFixtures.stored(h, USER);
    }

    private static int buckets(KeyedBroadcastOperatorTestHarness<Long, ?, ?, ?> h)
            throws Exception {
        var backend = h.getOperator().getKeyedStateBackend();
        backend.setCurrentKey(USER);
        int n = 0;
        for (Object k : CappingHarnesses.keyed(backend, HistoryStore.BUCKETS).keys()) {
            n++;
        }
        return n;
    }

    private static boolean isLong(KeyedBroadcastOperatorTestHarness<Long, ?, ?, ?> h)
            throws Exception {
        var backend = h.getOperator().getKeyedStateBackend();
        backend.setCurrentKey(USER);
        return CappingHarnesses.keyed(backend, HistoryStore.LONG).value() != null;
    }

    /**
     * The contract's rule, by brute force over every interval start on the grid: counted messages
     * per grid cell, per scope; an interval [s, s + w) is the cells s .. s + w - 1.
     */
    static final class GridOracle {
        record Result(String decision, List<String> violations) {}

        private final LimitConfig config;
        private final long longest;
        private final int[] all = new int[40_000];
        private final int[] email = new int[40_000];
        private final Map<String, Long> countedAt = new HashMap<>();
        private final List<long[]> counted = new ArrayList<>();
        private final List<String> countedIds = new ArrayList<>();
        private final List<String> countedChannels = new ArrayList<>();
        private long latest = Long.MIN_VALUE;

        GridOracle(LimitConfig config) {
            this.config = config;
            this.longest = config.longestWindowMillis();
        }

        long latest() {
            return latest;
        }

        /** Entries within twice the longest window of the latest: what a history keeps. */
        int kept() {
            int n = 0;
            for (int c = cell(latest - 2 * longest) + 1; c <= cell(latest); c++) {
                n += all[c];
            }
            return n;
        }

        Map<String, Long> countedSince(long from) {
            Map<String, Long> out = new HashMap<>();
            for (int i = 0; i < counted.size(); i++) {
                if (counted.get(i)[0] >= from) {
                    out.put(countedIds.get(i), counted.get(i)[0]);
                }
            }
            return out;
        }

        /**
         * The write of the user's key (contract.md §7): its counted messages scored at or after the
         * latest minus the longest window, expiring that window after the latest.
         */
        MirrorWrite log() {
            MirrorLog log = new MirrorLog();
            for (int i = 0; i < counted.size(); i++) {
                if (counted.get(i)[0] >= latest - longest) {
                    log.add(counted.get(i)[0], countedChannels.get(i), countedIds.get(i));
                }
            }
            return log.write(USER, longest);
        }

        private int cell(long t) {
            return (int) ((t - T0) / GRID) + 10_000;
        }

        Result decide(String id, String channel, long t) {
            Long before = countedAt.get(id);
            if (before != null && before > latest - 2 * longest) {
                return new Result("DUPLICATE", List.of());
            }
            if (!counted.isEmpty() && t < latest - longest) {
                return new Result("STALE", List.of());
            }
            List<String> violations = violationsAt(channel, t);
            if (!violations.isEmpty()) {
                return new Result("REJECTED", violations);
            }
            all[cell(t)]++;
            if (channel.equals("email")) {
                email[cell(t)]++;
            }
            countedAt.put(id, t);
            counted.add(new long[] {t});
            countedIds.add(id);
            countedChannels.add(channel);
            latest = Math.max(latest, t);
            return new Result("ALLOWED", List.of());
        }

        List<String> violationsAt(String channel, long t) {
            List<String> out = new ArrayList<>();
            var rule = config.ruleFor("*");
            for (var l : rule.caps().all()) {
                int most = most(all, cell(t), (int) (l.windowMillis() / GRID));
                if (most + 1 > l.max()) {
                    out.add("all " + l.window() + " " + l.max() + " " + most);
                }
            }
            for (var l : rule.channelLimits(channel)) {
                int most = most(email, cell(t), (int) (l.windowMillis() / GRID));
                if (most + 1 > l.max()) {
                    out.add("channel:" + channel + " " + l.window() + " " + l.max() + " " + most);
                }
            }
            return out;
        }

        /** The most counted in any w cells containing cell c. */
        private static int most(int[] cells, int c, int w) {
            int sum = 0;
            for (int i = c - w + 1; i <= c; i++) {
                sum += cells[i];
            }
            int best = sum;
            for (int s = c - w + 2; s <= c; s++) {
                sum += cells[s + w - 1] - cells[s - 1];
                best = Math.max(best, sum);
            }
            return best;
        }

        /** The first time on the grid from t on at which the message would pass. */
        long retryAfter(String channel, long t) {
            for (long at = t; ; at += GRID) {
                if (violationsAt(channel, at).isEmpty()) {
                    return at;
                }
            }
        }
    }
}
