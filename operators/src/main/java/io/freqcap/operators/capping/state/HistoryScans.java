package io.freqcap.operators.capping.state;

import io.freqcap.operators.capping.history.LongHistory;
import io.freqcap.schema.history.StoredHistorySerializer;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.mirror.MirrorLog;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;

/**
 * What visits every history of a capping task (Flink's {@code applyToKeyedState}): the cleanup
 * sweep and the mirror rebuild. Both run on the task's thread, so the task decides nothing while
 * they run (about a second per million users).
 *
 * <p><b>State cleanup.</b> A user's history can matter only to messages whose intervals reach back
 * to it. Once messages arrive a longest window W past the latest counted one, none does. A periodic
 * sweep ({@link io.freqcap.schema.config.ControlRecord.Kind#SWEEP}, broadcast to every instance)
 * therefore clears each history whose latest counted message is 2W or more behind the watermark
 * (the extra W is slack for late messages). A sweep rather than a timer per user: timers cost a
 * RocksDB write on a user's first message and about 8 bytes of state per user, for nothing a sweep
 * cannot do. A sweep visits every key of the instance, about a second per million users, every few
 * minutes. Event time, not state TTL: TTL only knows processing time, and decisions are made on
 * message time, which a backfill or a replay can move far from the wall clock; and TTL is fixed
 * when the job starts while W changes with every config.
 */
public final class HistoryScans {
    private HistoryScans() {}

    /**
     * What a sweep cleared: how many histories, and the swept horizon they call for: the latest
     * instant a message could have and still need one of their entries ({@link Long#MIN_VALUE} when
     * none were cleared).
     */
    public record Swept(long histories, long horizon) {}

    /** Per user, what a sweep may clear and how far a cleared history's entries reach. */
    public interface Reach {
        /** A history whose latest counted message is at or before this is cleared. */
        long clearBefore(long user);

        /** How long after its latest entry a message may still count that entry. */
        long window(long user);
    }

    /**
     * Clears each history whose latest counted message is at or before {@code
     * reach.clearBefore(user)}. A long history is judged by its newest bucket, never read whole.
     */
    public static Swept sweep(
            KeyedBroadcastProcessFunction<Long, ?, ?, ?>.Context ctx,
            HistoryStore.States states,
            Reach reach)
            throws Exception {
        long[] count = {0, Long.MIN_VALUE};
        ctx.applyToKeyedState(
                HistoryStore.STATE,
                (user, state) -> {
                    long before = reach.clearBefore(user);
                    UserHistory h = StoredHistorySerializer.decoded(state.value());
                    if (h != null && (h.isEmpty() || h.latest() <= before)) {
                        if (!h.isEmpty()) {
                            count[1] = Math.max(count[1], h.latest() + reach.window(user));
                        }
                        state.clear();
                        count[0]++;
                    }
                });
        MapState<Long, UserHistory> buckets = states.buckets();
        ctx.applyToKeyedState(
                HistoryStore.LONG,
                (user, mark) -> {
                    Long width = mark.value();
                    if (width == null) {
                        return;
                    }
                    long before = reach.clearBefore(user);
                    long newest = Long.MIN_VALUE;
                    for (long b : buckets.keys()) {
                        newest = Math.max(newest, b);
                    }
                    if (newest != Long.MIN_VALUE && newest < Math.floorDiv(before, width)) {
                        // Every entry is before the bucket holding `before`: clear it unread,
                        // its bucket's last instant standing in for its latest entry.
                        count[1] =
                                Math.max(count[1], (newest + 1) * width - 1 + reach.window(user));
                        buckets.clear();
                        mark.clear();
                        count[0]++;
                        return;
                    }
                    UserHistory last = newest == Long.MIN_VALUE ? null : buckets.get(newest);
                    if (last == null || last.isEmpty() || last.latest() <= before) {
                        if (last != null && !last.isEmpty()) {
                            count[1] = Math.max(count[1], last.latest() + reach.window(user));
                        }
                        buckets.clear();
                        mark.clear();
                        count[0]++;
                    }
                });
        return new Swept(count[0], count[1]);
    }

    /** What a rebuild wrote. */
    public record Rebuilt(long users, long messages, long usersWithoutIds) {}

    /**
     * Emits, per user with a history, the write of its whole log (contract.md §7): its key set, or
     * deleted when nothing of it is in the window (or it was counted while the mirror was off).
     */
    public static Rebuilt rebuild(
            KeyedBroadcastProcessFunction<Long, ?, ?, ?>.Context ctx,
            HistoryStore.States states,
            long window,
            Consumer<MirrorWrite> out)
            throws Exception {
        long[] n = {0, 0, 0};
        Consumer<MirrorWrite> counting =
                w -> {
                    out.accept(w);
                    if (w.deletes()) {
                        n[2]++;
                    } else {
                        n[0]++;
                        n[1] += w.entries();
                    }
                };
        ctx.applyToKeyedState(
                HistoryStore.STATE,
                (user, state) -> {
                    UserHistory h = StoredHistorySerializer.decoded(state.value());
                    if (h != null && !h.isEmpty()) {
                        counting.accept(MirrorLog.of(user, h, window));
                    }
                });
        MapState<Long, UserHistory> buckets = states.buckets();
        ctx.applyToKeyedState(
                HistoryStore.LONG,
                (user, mark) -> {
                    Long bucketMillis = mark.value();
                    if (bucketMillis == null) {
                        return;
                    }
                    Map<Long, UserHistory> all = new HashMap<>();
                    for (Map.Entry<Long, UserHistory> e : buckets.entries()) {
                        all.put(e.getKey(), e.getValue());
                    }
                    counting.accept(
                            MirrorLog.of(user, LongHistory.load(bucketMillis, all), window));
                });
        return new Rebuilt(n[0], n[1], n[2]);
    }
}
