package io.freqcap.operators.capping.state;

import io.freqcap.schema.history.StoredHistorySerializer;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.mirror.MirrorWrite;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
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
     * Emits, per user, writes that replace the user's keys with the counted messages of the last
     * {@code window}: one for a short history; for a long one a write per bucket, the first
     * replacing, so that no write holds more than a bucket.
     */
    public static Rebuilt rebuild(
            KeyedBroadcastProcessFunction<Long, ?, ?, ?>.Context ctx,
            HistoryStore.States states,
            long window,
            Consumer<MirrorWrite> out)
            throws Exception {
        long[] n = {0, 0, 0};
        ctx.applyToKeyedState(
                HistoryStore.STATE,
                (user, state) -> {
                    UserHistory h = StoredHistorySerializer.decoded(state.value());
                    if (h == null || h.isEmpty()) {
                        return;
                    }
                    MirrorWrite w = rebuildWrite(user, h, window);
                    if (w == null) {
                        n[2]++;
                        return;
                    }
                    out.accept(w);
                    n[0]++;
                    n[1] += w.size();
                });
        MapState<Long, UserHistory> buckets = states.buckets();
        ctx.applyToKeyedState(
                HistoryStore.LONG,
                (user, mark) -> {
                    if (mark.value() == null) {
                        return;
                    }
                    List<Long> keys = new ArrayList<>();
                    buckets.keys().forEach(keys::add);
                    Collections.sort(keys);
                    // First pass: every channel (the replacing write deletes their keys) and
                    // the latest timestamp, a bucket at a time.
                    Set<String> channels = new LinkedHashSet<>();
                    long latest = Long.MIN_VALUE;
                    long highest = Long.MIN_VALUE;
                    for (long k : keys) {
                        UserHistory h = buckets.get(k);
                        channels.addAll(Arrays.asList(h.channels()));
                        latest = Math.max(latest, h.latestStamped());
                        highest = Math.max(highest, h.latest());
                    }
                    String[] all = channels.toArray(new String[0]);
                    long written = 0;
                    for (long k : keys) {
                        UserHistory h = buckets.get(k);
                        MirrorWrite w = write(user, h, latest, highest, window, all, written == 0);
                        if (w != null) {
                            out.accept(w);
                            written += w.size();
                        }
                    }
                    if (written == 0) {
                        n[2]++;
                    } else {
                        n[0]++;
                        n[1] += written;
                    }
                });
        return new Rebuilt(n[0], n[1], n[2]);
    }

    /**
     * The replacing write of one user's counted messages scored at or after its latest stamped
     * timestamp minus the window (what Redis keeps, contract.md §7), or null if none.
     */
    static MirrorWrite rebuildWrite(long user, UserHistory h, long window) {
        return write(user, h, h.latestStamped(), h.latest(), window, h.channels(), true);
    }

    /**
     * A write of the entries of {@code h} that have a messageId and that Redis keeps: scored at or
     * after {@code latestStamped} minus the window; or null if none.
     *
     * @param latestStamped the user's latest stamped timestamp
     * @param highest the user's highest score (its keys expire a window after it at the earliest)
     * @param channels every channel of the entries (and, replacing, of the user)
     */
    private static MirrorWrite write(
            long user,
            UserHistory h,
            long latestStamped,
            long highest,
            long window,
            String[] channels,
            boolean replace) {
        long from = latestStamped - window;
        List<String> channelList = Arrays.asList(channels);
        int n = 0;
        for (int i = 0; i < h.size(); i++) {
            if (h.timestamp(i) >= from && h.messageId(i) != null) {
                n++;
            }
        }
        if (n == 0) {
            return null;
        }
        int[] channelOf = new int[n];
        long[] ts = new long[n];
        String[] ids = new String[n];
        int k = 0;
        for (int i = 0; i < h.size(); i++) {
            if (h.timestamp(i) >= from && h.messageId(i) != null) {
                channelOf[k] = channelList.indexOf(h.channel(i));
                ts[k] = h.timestamp(i);
                ids[k++] = h.messageId(i);
            }
        }
        return new MirrorWrite(
                user,
                window,
                replace ? MirrorWrite.Kind.REPLACE : MirrorWrite.Kind.ADD,
                latestStamped,
                channels,
                channelOf,
                ts,
                ids,
                highest);
    }
}
