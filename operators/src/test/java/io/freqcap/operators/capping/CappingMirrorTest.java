package io.freqcap.operators.capping;

import static io.freqcap.operators.capping.CappingFixtures.MORNING;
import static io.freqcap.operators.capping.CappingFixtures.NIGHT;
import static io.freqcap.operators.capping.CappingFixtures.ONE_A_DAY_HELD;
import static io.freqcap.schema.Instants.DAY;
import static io.freqcap.schema.Instants.DAY_1_NOON;
import static io.freqcap.schema.Instants.HOUR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.operators.mirror.WriterSide;
import io.freqcap.schema.Records;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.mirror.MirrorLog;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the capping operator leaves in the Redis mirror (contract.md §7, layout 2), read through a
 * model of Redis ({@link MirrorModel}): one key per user holding its counted messages of the last
 * longest window, written whole after a change, deleted when nothing is left, rebuilt on demand and
 * after the writer dropped its backlog.
 */
class CappingMirrorTest {
    static final long WEEK = 7 * DAY;
    static final String TWO_A_DAY = CappingFixtures.dailyConfig(1, 2);
    static final ControlRecord REBUILD =
            CappingFunctionTest.control("{\"command\": \"rebuild-mirror\"}");

    @RegisterExtension final CappingHarnesses harnesses = new CappingHarnesses();

    KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ControlRecord, Delivery> harness(
            boolean mirror, OperatorSubtaskState restoreFrom) throws Exception {
        return harnesses.open(CappingSettings.of(TWO_A_DAY).withMirror(mirror), restoreFrom, 1, 0);
    }

    InboundMessage message(String id, long user, String channel, String category, long t) {
        return Records.message(id, user, t)
                .channel(channel)
                .category(category)
                .inbound(harnesses.nextOffset());
    }

    void send(KeyedBroadcastOperatorTestHarness<Long, InboundMessage, ?, ?> h, InboundMessage m)
            throws Exception {
        h.processElement(m, m.message().timestamp());
    }

    static MirrorLog.Entry entry(long score, String channel, String id) {
        return new MirrorLog.Entry(score, channel, id);
    }

    /**
     * The user's key lists exactly its counted messages scored at or after its latest stamped
     * timestamp minus the longest window (a week), in score order, and expires a week after the
     * highest score; the changes between two flushes are one write.
     */
    @Test
    void theUsersKeyListsItsCountedMessagesOfTheLastWeekWrittenOncePerFlush() throws Exception {
        var h = harness(true, null);
        MirrorModel redis = new MirrorModel();
        send(h, message("m1", 42, "push", "marketing", DAY_1_NOON));
        send(h, message("t1", 42, "push", "transactional", DAY_1_NOON + 1)); // EXEMPT
        send(h, message("m1", 42, "push", "marketing", DAY_1_NOON + 2)); // DUPLICATE
        redis.apply(h);
        assertEquals(1, redis.writes(), "one write: the exempt and the duplicate count nothing");
        assertEquals(List.of(entry(DAY_1_NOON, "push", "m1")), redis.entries(42));
        assertEquals(DAY_1_NOON + WEEK, redis.key(42).expireAt());

        send(h, message("m4", 42, "push", "marketing", DAY_1_NOON + DAY + HOUR));
        send(h, message("m2", 42, "email", "marketing", DAY_1_NOON + HOUR)); // late, still in
        send(h, message("m3", 42, "push", "marketing", DAY_1_NOON + 2 * HOUR)); // REJECTED
        redis.apply(h);
        assertEquals(2, redis.writes(), "two counted messages between flushes: one write");
        assertEquals(
                List.of(
                        entry(DAY_1_NOON, "push", "m1"),
                        entry(DAY_1_NOON + HOUR, "email", "m2"),
                        entry(DAY_1_NOON + DAY + HOUR, "push", "m4")),
                redis.entries(42));
        assertEquals(DAY_1_NOON + DAY + HOUR + WEEK, redis.key(42).expireAt());

        long m5 = DAY_1_NOON + WEEK + DAY; // m1 and m2 fall out of the week before it, m4 stays
        send(h, message("m5", 42, "sms", "marketing", m5));
        redis.apply(h);
        assertEquals(3, redis.writes());
        assertEquals(
                "{\"v\": 2, \"log\": [["
                        + (DAY_1_NOON + DAY + HOUR)
                        + ", \"push\", \"m4\"], ["
                        + m5
                        + ", \"sms\", \"m5\"]]}",
                redis.key(42).value(),
                "the contract's form, byte for byte");
        assertEquals(m5 + WEEK, redis.key(42).expireAt());

        redis.apply(h);
        assertEquals(3, redis.writes(), "no change, no write");
    }

    /** Messages of one score are ordered by messageId, by code points (not UTF-16 units). */
    @Test
    void entriesOfOneScoreAreOrderedByMessageIdCodePoints() throws Exception {
        var h = harness(true, null);
        MirrorModel redis = new MirrorModel();
        String astral = "\uD83D\uDE00"; // U+1F600, before U+FF5E by UTF-16 units, after by code
        send(h, message("b\uFF5E", 42, "push", "marketing", DAY_1_NOON));
        send(h, message("b" + astral, 42, "push", "marketing", DAY_1_NOON));
        redis.apply(h);
        assertEquals(List.of("b\uFF5E", "b" + astral), redis.ids(42));
    }

    @Test
    void rebuildMirrorWritesEveryUsersWholeLogAgainAfterARestore() throws Exception {
        var before = harness(true, null);
        send(before, message("a1", 1, "push", "marketing", DAY_1_NOON - 9 * DAY));
        send(before, message("a2", 1, "email", "marketing", DAY_1_NOON));
        send(before, message("a3", 1, "push", "marketing", DAY_1_NOON + HOUR));
        send(before, message("b1", 2, "sms", "marketing", DAY_1_NOON));
        CappingHarnesses.mirrored(before); // written before the barrier, as the operator does
        OperatorSubtaskState snapshot = before.snapshot(1, 1);
        harnesses.close(before);

        // Redis lost everything meanwhile (a restart without persistence).
        var after = harness(true, snapshot);
        MirrorModel redis = new MirrorModel();
        after.processBroadcastElement(REBUILD, 0);
        redis.apply(after);
        assertEquals(2, redis.writes(), "one write per user");
        // a1 is more than the week before user 1's latest: still in the history, not in Redis.
        assertEquals(
                List.of(entry(DAY_1_NOON, "email", "a2"), entry(DAY_1_NOON + HOUR, "push", "a3")),
                redis.entries(1));
        assertEquals(DAY_1_NOON + HOUR + WEEK, redis.key(1).expireAt());
        assertEquals(List.of(entry(DAY_1_NOON, "sms", "b1")), redis.entries(2));
        assertEquals(DAY_1_NOON + WEEK, redis.key(2).expireAt());
    }

    @Test
    void withoutTheMirrorNothingIsEmittedAndRebuildDoesNothing() throws Exception {
        var h = harness(false, null);
        send(h, message("m1", 42, "push", "marketing", DAY_1_NOON));
        h.processBroadcastElement(REBUILD, 0);
        assertEquals(List.of(), CappingHarnesses.mirrored(h), "not even when flushed");
        assertNull(h.getSideOutput(CappingFunction.MIRROR));
        assertEquals(1, h.extractOutputValues().size());
        assertNull(h.getSideOutput(CappingFunction.AUDIT), "rebuild-mirror is a known command");
    }

    /**
     * Contract v6 §7: a second {@code forget-user} of a user is remembered apart from the first.
     * Redis confirming the first deletion (its answer to the second lost with a dropped backlog)
     * leaves the second owed: a rebuild sends it again, until Redis confirms that one.
     */
    @Test
    void theConfirmationOfAFirstForgetUserDoesNotSettleASecondOne() throws Exception {
        var h = harness(true, null);
        try (WriterSide writer = CappingHarnesses.writerSide(h)) {
            send(h, message("m1", 42, "push", "marketing", DAY_1_NOON));
            CappingHarnesses.mirrored(h); // 42's key written
            h.processBroadcastElement(Records.forgetUser(42), 0);
            MirrorWrite first = last(CappingHarnesses.mirrored(h));
            assertEquals(MirrorWrite.deletion(42, first.deletion()), first);
            assertNotEquals(0, first.deletion(), "a deletion Redis is to confirm");

            send(h, message("m2", 42, "push", "marketing", DAY_1_NOON + HOUR)); // back again
            CappingHarnesses.mirrored(h);
            h.processBroadcastElement(Records.forgetUser(42), 0);
            MirrorWrite second = last(CappingHarnesses.mirrored(h));
            assertTrue(second.deletes());
            assertNotEquals(0, second.deletion());
            assertNotEquals(first.deletion(), second.deletion(), "each deletion its own id");

            writer.confirmed(42, first.deletion());
            int sent = CappingHarnesses.mirrored(h).size();
            h.processBroadcastElement(REBUILD, 0);
            List<MirrorWrite> rebuilt = since(h, sent);
            assertEquals(List.of(MirrorWrite.deletion(42, second.deletion())), rebuilt);

            writer.confirmed(42, second.deletion());
            sent = CappingHarnesses.mirrored(h).size();
            h.processBroadcastElement(REBUILD, 0);
            assertEquals(List.of(), since(h, sent), "both confirmed: nothing owed");
        }
    }

    /**
     * Contract v6 §7: once Redis answers again after the writer dropped its backlog, the task
     * rebuilds every key, deleting those of users whose last counted message stopped counting while
     * the writes were dropped: a rebuild only visits users with a history, so the task remembers
     * that deletion until Redis confirms it.
     */
    @Test
    void afterADroppedBacklogTheRebuildDeletesTheKeyOfAUserWhoseLastMessageStoppedCounting()
            throws Exception {
        var h = harnesses.open(CappingSettings.of(ONE_A_DAY_HELD).withMirror(true));
        h.setProcessingTime(NIGHT);
        MirrorModel redis = new MirrorModel();
        try (WriterSide writer = CappingHarnesses.writerSide(h)) {
            h.processElement(held("a-1", 42, "spring-sale"), NIGHT);
            h.processElement(held("c-1", 44, "other"), NIGHT);
            redis.apply(h);
            assertEquals(List.of(entry(MORNING, "push", "a-1")), redis.entries(42));
            assertEquals(List.of("c-1"), redis.ids(44));

            // Redis goes away: the writer drops its backlog, and what the task writes meanwhile.
            writer.dropped();
            h.processBroadcastElement(
                    Records.config("{\"command\":\"cancel-held\",\"campaignId\":\"spring-sale\"}"),
                    NIGHT);
            h.processElement(held("e-1", 45, "other"), NIGHT);
            redis.lose(h);
            assertEquals(List.of("a-1"), redis.ids(42), "Redis still lists the cancelled message");
            assertNull(redis.key(45));

            // Redis answers again: the next tick pays the rebuild owed.
            writer.redisAnswers();
            long rebuilds = writer.rebuildsStarted();
            h.processBroadcastElement(ControlRecord.mirrorTick(1), NIGHT);
            assertEquals(rebuilds + 1, writer.rebuildsStarted());
            redis.apply(h);
            assertNull(redis.key(42), "a-1 no longer counts, and 42 counts nothing else");
            assertEquals(List.of("c-1"), redis.ids(44));
            assertEquals(List.of(entry(MORNING, "push", "e-1")), redis.entries(45));
            assertEquals(MORNING + DAY, redis.key(45).expireAt());

            // Paid: the next tick rebuilds nothing.
            h.processBroadcastElement(ControlRecord.mirrorTick(2), NIGHT);
            assertEquals(rebuilds + 1, writer.rebuildsStarted());
        }
    }

    InboundMessage held(String id, long user, String campaign) {
        return Records.message(id, user, NIGHT).campaign(campaign).inbound(harnesses.nextOffset());
    }

    static MirrorWrite last(List<MirrorWrite> writes) {
        return writes.get(writes.size() - 1);
    }

    /** The writes the harness made after its first {@code n}, flushing the changed users. */
    static List<MirrorWrite> since(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h, int n) {
        List<MirrorWrite> all = CappingHarnesses.mirrored(h);
        return all.subList(n, all.size());
    }

    /** A config of two a day and five in {@code longest}. */
    static ControlRecord weekly(long version, String longest) {
        return CappingFunctionTest.control(
                io.freqcap.schema.Configs.version(version)
                        .rule(
                                io.freqcap.schema.Configs.rule(
                                        "*",
                                        io.freqcap.schema.Configs.window("1d", 2),
                                        io.freqcap.schema.Configs.window(longest, 5)))
                        .json());
    }

    /**
     * A config whose longest window differs rewrites every user's key (§7: the log holds what the
     * window in force keeps, and expires a window after its highest score), and one that keeps the
     * window rewrites nothing.
     */
    @Test
    void aConfigThatChangesTheLongestWindowRewritesEveryKey() throws Exception {
        var h = harness(true, null);
        MirrorModel redis = new MirrorModel();
        send(h, message("a1", 1, "push", "marketing", DAY_1_NOON - 9 * DAY));
        send(h, message("a2", 1, "push", "marketing", DAY_1_NOON));
        send(h, message("b1", 2, "sms", "marketing", DAY_1_NOON));
        redis.apply(h);
        assertEquals(List.of("a2"), redis.ids(1), "a1 is more than a week before a2");
        int writes = redis.writes();

        h.processBroadcastElement(weekly(2, "7d"), 0);
        redis.apply(h);
        assertEquals(writes, redis.writes(), "the same longest window: no key rewritten");

        h.processBroadcastElement(weekly(3, "10d"), 0);
        redis.apply(h);
        assertEquals(writes + 2, redis.writes(), "both users' keys rewritten");
        assertEquals(List.of("a1", "a2"), redis.ids(1), "a1 is within ten days of a2");
        assertEquals(DAY_1_NOON + 10 * DAY, redis.key(1).expireAt());
        assertEquals(DAY_1_NOON + 10 * DAY, redis.key(2).expireAt());
    }

    /**
     * After a restore, a message may be decided otherwise than before the failure (a config read at
     * another point of the input): its user's key is written again even though nothing is counted,
     * so Redis does not keep what no longer counts.
     */
    @Test
    void aMessageReplayedAfterARestoreAndNoLongerCountedLeavesRedis() throws Exception {
        var before = harness(true, null);
        MirrorModel redis = new MirrorModel();
        send(before, message("a1", 42, "push", "marketing", DAY_1_NOON));
        OperatorSubtaskState checkpoint = before.snapshot(1, 1);
        redis.apply(before);
        send(before, message("a2", 42, "push", "marketing", DAY_1_NOON + HOUR));
        redis.apply(before); // written, then the task fails before the next checkpoint
        assertEquals(List.of("a1", "a2"), redis.ids(42));
        harnesses.close(before);

        var after = harness(true, checkpoint);
        // On the replay a config of one a day is read first: a2 is REJECTED now.
        after.processBroadcastElement(
                CappingFunctionTest.control(CappingFixtures.dailyConfig(2, 1)), 0);
        send(after, message("a2", 42, "push", "marketing", DAY_1_NOON + HOUR));
        assertEquals("REJECTED", CappingHarnesses.audits(after).get(0).get("decision").asText());
        redis.apply(after);
        assertEquals(List.of("a1"), redis.ids(42), "Redis holds what counts after the replay");
    }

    /**
     * Restored at another parallelism, a writer's backlog may hold users another task owns now: it
     * leaves them, and every task owes a rebuild, which writes each of its users' keys once Redis
     * answers.
     */
    @Test
    void aRestoreAtAnotherParallelismRebuildsEveryKeyOnceRedisAnswers() throws Exception {
        var one = harness(true, null);
        for (long user = 1; user <= 6; user++) {
            send(one, message("m" + user, user, "push", "marketing", DAY_1_NOON));
        }
        OperatorSubtaskState checkpoint = one.snapshot(1, 1);
        harnesses.close(one);

        var two =
                harnesses.open(
                        CappingSettings.of(TWO_A_DAY).withMirror(true),
                        CappingHarnesses.rescaled(List.of(checkpoint), 2, 0),
                        2,
                        0);
        MirrorModel redis = new MirrorModel();
        try (WriterSide writer = CappingHarnesses.writerSide(two)) {
            long rebuilds = writer.rebuildsStarted();
            writer.redisAnswers();
            two.processBroadcastElement(ControlRecord.mirrorTick(1), 0);
            assertEquals(rebuilds + 1, writer.rebuildsStarted(), "the rescale owed a rebuild");
            redis.apply(two);
            assertTrue(redis.keys().size() >= 1, "this task's users written: " + redis.keys());
            assertTrue(redis.keys().size() < 6, "only this task's users: " + redis.keys());
            two.processBroadcastElement(ControlRecord.mirrorTick(2), 0);
            assertEquals(rebuilds + 1, writer.rebuildsStarted(), "paid once");
        }
    }
}
