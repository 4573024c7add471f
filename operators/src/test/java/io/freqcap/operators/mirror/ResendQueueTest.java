package io.freqcap.operators.mirror;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.freqcap.schema.mirror.MirrorLog;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.ArrayDeque;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResendQueueTest {
    /** User 42's log of one message, as written after it was counted. */
    static MirrorWrite write(String id, long stamped) {
        MirrorLog log = new MirrorLog();
        log.add(stamped, "push", id);
        return log.write(42, 86_400_000L);
    }

    @Test
    void failuresAnsweredOverSeveralPollsAreSentAgainInTheOrderFirstSent() {
        MirrorWrite first = write("a", 1);
        MirrorWrite second = write("b", 2);
        MirrorWrite third = write("c", 3);
        MirrorWrite unsent = write("d", 4);
        ArrayDeque<MirrorWrite> pending = new ArrayDeque<>(List.of(unsent));
        ResendQueue resent = new ResendQueue();

        // The first batch fails; two sent after it are still in flight.
        resent.failed(List.of(first), true, pending);
        assertEquals(List.of(unsent), List.copyOf(pending), "nothing goes back while in flight");
        assertEquals(List.of(first), resent.writes(), "a checkpoint keeps them");
        // They come back one poll at a time, the last with nothing in flight any more.
        resent.failed(List.of(second), true, pending);
        resent.failed(List.of(third), false, pending);

        assertEquals(List.of(first, second, third, unsent), List.copyOf(pending));
        assertEquals(List.of(), resent.writes());
    }

    @Test
    void droppingGivesUpTheWritesWaiting() {
        ResendQueue resent = new ResendQueue();
        resent.failed(List.of(write("a", 1), write("b", 2)), true, new ArrayDeque<>());
        assertEquals(2, resent.clear());
        assertEquals(List.of(), resent.writes());
    }
}
