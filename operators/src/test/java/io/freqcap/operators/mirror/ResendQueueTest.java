package io.freqcap.operators.mirror;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.freqcap.schema.mirror.MirrorLog;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResendQueueTest {
    /** A user's log of one message, as written after it was counted (user = its time). */
    static MirrorWrite write(String id, long stamped) {
        MirrorLog log = new MirrorLog();
        log.add(stamped, "push", id);
        return log.write(stamped, 86_400_000L);
    }

    @Test
    void failuresAnsweredOverSeveralPollsAreSentAgainInTheOrderFirstSent() {
        MirrorWrite first = write("a", 1);
        MirrorWrite second = write("b", 2);
        MirrorWrite third = write("c", 3);
        MirrorWrite unsent = write("d", 4);
        PendingWrites pending = new PendingWrites();
        pending.add(unsent);
        ResendQueue resent = new ResendQueue();

        // The first batch fails; two sent after it are still in flight.
        resent.failed(List.of(first), true, pending);
        assertEquals(List.of(unsent), pending.list(), "nothing goes back while in flight");
        assertEquals(List.of(first), resent.writes(), "a checkpoint keeps them");
        // They come back one poll at a time, the last with nothing in flight any more.
        resent.failed(List.of(second), true, pending);
        resent.failed(List.of(third), false, pending);

        assertEquals(List.of(first, second, third, unsent), pending.list());
        assertEquals(List.of(), resent.writes());
    }

    @Test
    void droppingGivesUpTheWritesWaiting() {
        ResendQueue resent = new ResendQueue();
        resent.failed(List.of(write("a", 1), write("b", 2)), true, new PendingWrites());
        assertEquals(2, resent.clear());
        assertEquals(List.of(), resent.writes());
    }

    /**
     * A user's write not sent yet is replaced by the user's next one (one log per user waits, and
     * weighs once in the backlog), which carries the deletion id the replaced one had to settle;
     * writes sent again go in front, and the later write of their user replaces them.
     */
    @Test
    void oneWriteWaitsPerUserAndALaterOneSettlesWhatTheEarlierHad() {
        PendingWrites pending = new PendingWrites();
        MirrorWrite forgotten = MirrorWrite.deletion(7, 99, "push");
        MirrorLog log = new MirrorLog();
        log.add(5, "push", "a");
        log.add(6, "push", "b");
        MirrorWrite again = log.write(7, 86_400_000L);
        pending.add(write("x", 1));
        pending.add(forgotten);
        pending.add(again);
        assertEquals(2, pending.size());
        assertEquals(1 + 2, pending.weight(), "user 1's one entry, user 7's latest log");
        MirrorWrite seven = pending.list().get(1);
        assertEquals(again.log().length, seven.log().length);
        assertEquals(99, seven.deletion(), "its acknowledgement confirms the erasure too");
        assertEquals(List.of("push"), List.of(seven.legacyChannels()));

        MirrorWrite older = write("y", 7);
        pending.addFirst(List.of(older, write("z", 3)));
        assertEquals(
                List.of(7L, 3L, 1L), pending.list().stream().map(MirrorWrite::userId).toList());
        assertEquals(again.entries(), pending.list().get(0).entries(), "the later log wins");
        assertEquals(1 + 1 + 2, pending.weight());
        assertEquals(7, pending.poll().userId());
        assertEquals(2, pending.weight());
    }
}
