package io.freqcap.operators.mirror;

import io.freqcap.schema.mirror.MirrorWrite;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Writes Redis did not take, waiting to be sent again in the order they were first sent. Each write
 * trims by the stamped timestamp it carries, so a write applied after a later one of its user could
 * bring back what that one trimmed: after a failure, everything sent after it is sent again too
 * ({@link RedisChannel.Answers#failed}). The answers of the batches in flight come back over
 * several polls; they are collected here until none is in flight, then go in front of the writes
 * never sent, together and in order.
 */
final class ResendQueue {
    private final List<MirrorWrite> resent = new ArrayList<>();

    /**
     * Takes the failed writes of one poll.
     *
     * @param inFlight whether batches sent after them are still in flight
     * @param pending the writes never sent, which the resent ones go in front of
     */
    void failed(List<MirrorWrite> failed, boolean inFlight, Deque<MirrorWrite> pending) {
        resent.addAll(failed);
        if (!inFlight) {
            for (int i = resent.size() - 1; i >= 0; i--) {
                pending.addFirst(resent.get(i));
            }
            resent.clear();
        }
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
