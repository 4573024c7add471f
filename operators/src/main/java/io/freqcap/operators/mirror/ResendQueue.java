package io.freqcap.operators.mirror;

import io.freqcap.schema.mirror.MirrorWrite;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes Redis did not take, waiting to be sent again in the order they were first sent. Each write
 * states its user's whole log, so a write applied after a later one of its user would bring back
 * what that one left out: after a failure, everything sent after it is sent again too ({@link
 * RedisChannel.Answers#failed}). The answers of the batches in flight come back over several polls;
 * they are collected here until none is in flight, then go in front of the writes never sent,
 * together and in order.
 */
final class ResendQueue {
    private final List<MirrorWrite> resent = new ArrayList<>();

    /**
     * Takes the failed writes of one poll.
     *
     * @param inFlight whether batches sent after them are still in flight
     * @param pending the writes never sent, which the resent ones go in front of
     */
    void failed(List<MirrorWrite> failed, boolean inFlight, PendingWrites pending) {
        resent.addAll(failed);
        if (!inFlight) {
            pending.addFirst(resent);
            resent.clear();
        }
    }

    /** What the writes waiting weigh in the backlog. */
    long weight() {
        long n = 0;
        for (MirrorWrite w : resent) {
            n += w.size();
        }
        return n;
    }

    /** The writes waiting, oldest first (a checkpoint keeps them). */
    List<MirrorWrite> writes() {
        return resent;
    }

    /** Gives up every write waiting; returns how many counted messages they held. */
    long clear() {
        long n = 0;
        for (MirrorWrite w : resent) {
            n += w.size();
        }
        resent.clear();
        return n;
    }
}
