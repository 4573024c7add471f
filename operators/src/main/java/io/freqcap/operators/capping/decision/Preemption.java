package io.freqcap.operators.capping.decision;

import io.freqcap.operators.capping.history.LongHistory;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.Fingerprints;
import io.freqcap.schema.history.UserHistory;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.BiFunction;

/**
 * Which held messages a message of a {@code preempt} rule takes the place of (contract.md §6,
 * "Preemption"): the waiting ones of lower priority, given up lowest priority first, then latest
 * send time, then most recently decided, as few as let the message pass; none at all when it would
 * not pass without every one of them. Plain Java.
 *
 * <p>Un-counting entries never makes a limit fail that passed (every count, distinct-campaign set
 * and held-message count only shrinks), so whether the message passes with the first k given up is
 * monotone in k, and the fewest are found by bisection: a few decisions, each against a copy of the
 * history without them, however many are waiting.
 */
final class Preemption {
    private Preemption() {}

    /**
     * The held messages given up, in the order they were, the message's verdict without them, and
     * the history without them (as it is once they are un-counted).
     */
    record Found(List<HeldDelivery> taken, Verdict verdict, CountedHistory without) {}

    /**
     * The order in which held messages give up their place (ties last by messageId, to be sure).
     */
    static final Comparator<HeldDelivery> ORDER =
            Comparator.comparingInt((HeldDelivery h) -> h.message().priority())
                    .thenComparing(
                            Comparator.comparingLong((HeldDelivery h) -> h.delivery().sendAt())
                                    .reversed())
                    .thenComparing(Comparator.comparingLong(HeldDelivery::decided).reversed())
                    .thenComparing(h -> h.message().messageId());

    /**
     * @param before the user's history
     * @param waiting the held messages still waiting, of lower priority than the message
     * @param judge the message's verdict against a history, with the held messages given up
     * @return null when the message does not pass with all of them given up
     */
    static Found find(
            CountedHistory before,
            List<HeldDelivery> waiting,
            BiFunction<CountedHistory, List<HeldDelivery>, Verdict> judge) {
        List<HeldDelivery> order = new ArrayList<>(waiting);
        order.sort(ORDER);
        UserHistory all =
                before instanceof LongHistory l ? l.toUserHistory() : (UserHistory) before;
        UserHistory h = without(all, order, order.size());
        Verdict v = judge.apply(h, order);
        if (v.decision() != Decision.ALLOWED) {
            return null;
        }
        int lo = 1; // fewer than lo do not let it pass
        int hi = order.size(); // hi do, with verdict v
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            UserHistory w = without(all, order, mid);
            Verdict m = judge.apply(w, order.subList(0, mid));
            if (m.decision() == Decision.ALLOWED) {
                hi = mid;
                v = m;
                h = w;
            } else {
                lo = mid + 1;
            }
        }
        return new Found(List.copyOf(order.subList(0, hi)), v, h);
    }

    /** The history without the first {@code k} held messages (counted at their send times). */
    private static UserHistory without(UserHistory h, List<HeldDelivery> order, int k) {
        long[] at = new long[k];
        long[] fps = new long[k];
        for (int i = 0; i < k; i++) {
            at[i] = order.get(i).delivery().sendAt();
            fps[i] = Fingerprints.of(order.get(i).message().messageId());
        }
        return h.without(at, fps);
    }
}
