package io.freqcap.operators.capping.receipt;

import io.freqcap.operators.capping.decision.Engagements;
import io.freqcap.operators.capping.decision.Histories;
import io.freqcap.operators.capping.decision.Stores;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.Fingerprints;
import io.freqcap.schema.history.HistoryEntry;
import io.freqcap.schema.receipt.DeliveryReceipt;

/**
 * What a delivery receipt does (contract.md §11), the same in the job and in a backtest: a {@code
 * failed} one un-counts the message it names, if it is counted and no longer waits to be sent; an
 * engagement ({@code opened}, {@code clicked}) of a user with something counted may become the
 * user's last engagement; anything else changes nothing. It reads the stores and writes nothing;
 * {@link Effect#apply} writes the effect.
 */
public final class Receipts {
    private Receipts() {}

    /** What applying a receipt writes. */
    public sealed interface Effect {
        /** Writes it into the stores: the one place a receipt writes. */
        void apply(Stores stores) throws Exception;
    }

    /**
     * Nothing: no such counted message, one still held, an engagement of a user with nothing
     * counted, not later than the last or stamped later than the clock allows, another status.
     */
    public record Ignored() implements Effect {
        @Override
        public void apply(Stores stores) {}
    }

    /** The counted entry a failed delivery takes out of the user's history. */
    public record Uncounted(long user, String messageId, HistoryEntry entry) implements Effect {
        @Override
        public void apply(Stores stores) throws Exception {
            stores.histories().uncount(user, entry.timestamp(), messageId);
            if (entry.campaign() != null) {
                stores.lifetimes().uncount(user, entry.campaign());
            }
        }
    }

    /** The user engaged at {@code at}: the last engagement from now on, if later than the last. */
    public record Engaged(long user, long at) implements Effect {
        @Override
        public void apply(Stores stores) throws Exception {
            stores.engagements().engage(user, at);
        }
    }

    /** Whether a held entry's message still waits to be sent (the job asks its held state). */
    public interface StillHeld {
        boolean test(long user, HistoryEntry e) throws Exception;
    }

    /**
     * When a receipt is applied.
     *
     * @param at the receipt's timestamp, or the job's clock when it has none
     * @param latest the latest an engagement may be stamped: the job's wall clock when it reads the
     *     receipt plus {@code --max-future} ({@link io.freqcap.schema.message.FutureBound#latest});
     *     a later one would switch fatigue off for the user for good (contract.md §11)
     */
    public record Time(long at, long latest) {}

    /** The effect of {@code r} on its user's state. */
    public static Effect of(
            DeliveryReceipt r,
            long user,
            Time time,
            Histories histories,
            Engagements engagements,
            StillHeld stillHeld)
            throws Exception {
        if (r.engagement()) {
            // With nothing counted u is 0 anyway; one not later than the last changes nothing.
            long at = time.at();
            return histories.get(user).isEmpty()
                            || at <= engagements.lastOf(user)
                            || at > time.latest()
                    ? new Ignored()
                    : new Engaged(user, at);
        }
        if (!r.failed()) {
            return new Ignored();
        }
        CountedHistory h = histories.get(user);
        HistoryEntry e = h.isEmpty() ? null : h.withFingerprint(Fingerprints.of(r.messageId()));
        if (e == null
                || (e.messageId() != null && !e.messageId().equals(r.messageId()))
                || (e.heldFor() > 0 && stillHeld.test(user, e))) {
            return new Ignored();
        }
        return new Uncounted(user, r.messageId(), e);
    }
}
