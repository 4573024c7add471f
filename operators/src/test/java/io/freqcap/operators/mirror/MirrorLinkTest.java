package io.freqcap.operators.mirror;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The link between a capping task and its mirror writer: shared per attempt, released after. */
class MirrorLinkTest {
    @Test
    void theTwoSidesOfOneAttemptShareALinkThatGoesWhenBothRelease() {
        int before = MirrorLink.size();
        MirrorLink capping = MirrorLink.acquire("job", 3, 0);
        MirrorLink writer = MirrorLink.acquire("job", 3, 0);
        MirrorLink nextAttempt = MirrorLink.acquire("job", 3, 1);
        assertSame(capping, writer);
        assertNotSame(capping, nextAttempt);

        writer.dropped();
        assertTrue(capping.takeDropped());
        assertFalse(capping.takeDropped(), "taken once");
        assertFalse(capping.redisAnswered(), "a drop means Redis did not answer");
        writer.redisAnswers();
        assertTrue(capping.redisAnswered());
        long started = writer.rebuildsStarted();
        capping.startRebuild();
        assertTrue(writer.rebuilding());
        assertEquals(started + 1, writer.rebuildsStarted());
        capping.endRebuild();
        assertFalse(writer.rebuilding());

        capping.release();
        writer.release();
        nextAttempt.release();
        assertEquals(before, MirrorLink.size(), "no link left behind");
    }

    /** Deletions Redis acknowledged reach the capping task by user and id, each once, in order. */
    @Test
    void acknowledgedDeletionsAreTakenOnceByUserAndId() {
        MirrorLink capping = MirrorLink.acquire("job", 4, 0);
        MirrorLink writer = MirrorLink.acquire("job", 4, 0);
        try {
            assertEquals(List.of(), capping.takeErased());
            writer.erased(List.of(new MirrorLink.Deleted(42, 7)));
            writer.erased(List.of(new MirrorLink.Deleted(42, 9), new MirrorLink.Deleted(43, 7)));
            assertEquals(
                    List.of(
                            new MirrorLink.Deleted(42, 7),
                            new MirrorLink.Deleted(42, 9),
                            new MirrorLink.Deleted(43, 7)),
                    capping.takeErased());
            assertEquals(List.of(), capping.takeErased(), "taken once");
        } finally {
            capping.release();
            writer.release();
        }
    }
}
