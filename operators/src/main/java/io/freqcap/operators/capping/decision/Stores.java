package io.freqcap.operators.capping.decision;

import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.history.CountedHistory;

/**
 * The stores a {@link DecisionStep} reads, and the one place what it decided is written into them
 * (a receipt's effect writes itself, {@code receipt.Receipts.Effect#apply}): the job's keyed state,
 * or a backtest's memory.
 *
 * @param preferences the users' preferences, which every message must pass too (read only here)
 * @param engagements the users' last engagements, which a rule's {@code fatigue} reads
 * @param lifetimes the users' lifetime counts, which a rule's lifetime limits read
 */
public record Stores(
        Histories histories,
        HeldQueue held,
        Preferences preferences,
        Engagements engagements,
        Lifetimes lifetimes) {

    /** Stores of users without preferences who never engage, without lifetime counts. */
    public static Stores of(Histories histories, HeldQueue held) {
        return new Stores(histories, held, Preferences.NONE, Engagements.NONE, Lifetimes.NONE);
    }

    /**
     * Writes what {@code d} decided, for its user (in the job: the current key): the held messages
     * whose place it took are taken out and un-counted (in their campaigns' lifetime counts too),
     * the message is counted when ALLOWED (in its campaign's lifetime count too), and kept held
     * when its send time is still ahead. A malformed record writes nothing.
     *
     * @return the message kept held, or null when it is not held
     */
    public HeldDelivery apply(Decided d) throws Exception {
        Decided.Counting c = d.counting();
        if (c == null) {
            return null;
        }
        long user = d.message().userId();
        CountedHistory before = c.before();
        if (!d.preempted().isEmpty()) {
            held.take(user, d.preempted());
            for (HeldDelivery h : d.preempted()) {
                histories.uncount(user, h.delivery().sendAt(), h.message().messageId());
                if (h.message().campaignId() != null) {
                    lifetimes.uncount(user, h.message().campaignId());
                }
            }
            before = histories.get(user);
        }
        histories.count(user, before, c.entry(), c.keptMillis(), c.clock());
        String campaign = d.message().campaignId();
        if (campaign != null) {
            lifetimes.count(user, campaign, d.message().timestamp(), c.entry().timestamp());
        }
        if (d.route() != Decided.Route.LATER) {
            return null;
        }
        HeldDelivery h = d.heldDelivery();
        held.hold(user, h, d.now());
        return h;
    }
}
