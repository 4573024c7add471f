package io.freqcap.operators.capping;

import static io.freqcap.schema.Instants.DAY;
import static io.freqcap.schema.Instants.DAY_1_NOON;
import static io.freqcap.schema.Instants.HOUR;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.Records;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Delivery;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.Comparator;
import java.util.List;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What the capping operator hands the Redis mirror: counted messages, and rebuilds. */
class CappingMirrorTest {
    static final long WEEK = 7 * DAY;
    static final String TWO_A_DAY = CappingFunctionTest.config(1, 2);
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

    /**
     * Each write says what it changes in Redis: a trim only once the user has a member below the
     * bound (then naming the channels that have one), and the user's highest score for the expiry.
     */
    @Test
    void everyCountedMessageGoesToTheMirrorTrimmingOnlyWhatFallsOut() throws Exception {
        var h = harness(true, null);
        send(h, message("m1", 42, "push", "marketing", DAY_1_NOON));
        send(h, message("t1", 42, "push", "transactional", DAY_1_NOON + 1)); // EXEMPT
        send(h, message("m1", 42, "push", "marketing", DAY_1_NOON + 2)); // DUPLICATE
        send(h, message("m2", 42, "email", "marketing", DAY_1_NOON + HOUR));
        send(h, message("m3", 42, "push", "marketing", DAY_1_NOON + 2 * HOUR)); // REJECTED
        send(h, message("m4", 42, "push", "marketing", DAY_1_NOON + DAY + HOUR));
        long m5 = DAY_1_NOON + WEEK + DAY; // m1 and m2 fall out, m4 stays
        send(h, message("m5", 42, "sms", "marketing", m5));
        long noTrim = MirrorWrite.NO_TRIM;
        assertEquals(
                List.of(
                        // The first write of a user the job holds nothing of trims what it
                        // touches: a swept history's keys may live on.
                        MirrorWrite.counted(42, WEEK, DAY_1_NOON, "m1", DAY_1_NOON, "push")
                                .withHighestScore(DAY_1_NOON),
                        MirrorWrite.counted(42, WEEK, noTrim, "m2", DAY_1_NOON + HOUR, "email")
                                .withHighestScore(DAY_1_NOON + HOUR),
                        MirrorWrite.counted(42, WEEK, noTrim, "m4", DAY_1_NOON + DAY + HOUR, "push")
                                .withHighestScore(DAY_1_NOON + DAY + HOUR),
                        MirrorWrite.counted(42, WEEK, m5, "m5", m5, "sms", "push", "email")
                                .withHighestScore(m5)),
                CappingHarnesses.mirrored(h));
    }

    @Test
    void rebuildMirrorWritesEveryUsersCountedMessagesAgainAfterARestore() throws Exception {
        var before = harness(true, null);
        send(before, message("a1", 1, "push", "marketing", DAY_1_NOON - 9 * DAY));
        send(before, message("a2", 1, "email", "marketing", DAY_1_NOON));
        send(before, message("a3", 1, "push", "marketing", DAY_1_NOON + HOUR));
        send(before, message("b1", 2, "sms", "marketing", DAY_1_NOON));
        OperatorSubtaskState snapshot = before.snapshot(1, 1);
        harnesses.close(before);

        var after = harness(true, snapshot);
        after.processBroadcastElement(REBUILD, 0);
        List<MirrorWrite> writes = CappingHarnesses.mirrored(after);
        writes.sort(Comparator.comparingLong(MirrorWrite::userId));
        assertEquals(2, writes.size(), writes.toString());
        // a1 is more than the week before user 1's latest: still in the history, not in Redis.
        MirrorWrite user1 = writes.get(0);
        assertTrue(user1.replace());
        assertEquals(WEEK, user1.windowMillis());
        assertArrayEquals(new String[] {"a2", "a3"}, user1.messageIds());
        assertArrayEquals(new long[] {DAY_1_NOON, DAY_1_NOON + HOUR}, user1.timestamps());
        assertEquals("email", user1.channels()[user1.channelOf()[0]]);
        assertEquals("push", user1.channels()[user1.channelOf()[1]]);
        assertTrue(List.of(user1.channels()).containsAll(List.of("push", "email")));
        assertArrayEquals(new String[] {"b1"}, writes.get(1).messageIds());
        assertArrayEquals(new String[] {"sms"}, writes.get(1).channels());
    }

    @Test
    void withoutTheMirrorNothingIsEmittedAndRebuildDoesNothing() throws Exception {
        var h = harness(false, null);
        send(h, message("m1", 42, "push", "marketing", DAY_1_NOON));
        h.processBroadcastElement(REBUILD, 0);
        assertNull(h.getSideOutput(CappingFunction.MIRROR));
        assertEquals(1, h.extractOutputValues().size());
        assertNull(h.getSideOutput(CappingFunction.AUDIT), "rebuild-mirror is a known command");
    }
}
