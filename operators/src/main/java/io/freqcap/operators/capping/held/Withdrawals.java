package io.freqcap.operators.capping.held;

import io.freqcap.operators.capping.decision.Withdrawn;
import io.freqcap.operators.capping.lifetime.LifetimeStore;
import io.freqcap.operators.capping.outputs.CappingOutputs;
import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.operators.control.ControlHandler.Outcome;
import io.freqcap.schema.config.ConfigRecord;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldKey;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.LongPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The two commands that take counted messages back (contract.md §7), for {@link CappingFunction}:
 * {@code forget-user} erases a user (history, held messages as FORGOTTEN records, Redis keys) and
 * {@code cancel-held} withdraws held messages: a campaign's, a user's, or one message of a user
 * (CANCELLED records, un-counted in the history and in Redis), each with its tombstone on the held
 * topic when that is on. A failure is audited as INVALID_CONTROL by the instance that met it. A
 * user's opt-out or pause cancels held messages the same way ({@link
 * io.freqcap.operators.capping.preference.PreferenceInputs}).
 */
public record Withdrawals(
        HistoryStore histories,
        HeldMessages held,
        LifetimeStore lifetimes,
        LongConsumer keySetter,
        LongPredicate owns,
        Withdrawals.Eraser eraser,
        CappingOutputs out) {
    private static final Logger LOG = LoggerFactory.getLogger(Withdrawals.class);

    /** Erases one user's history, returning the channels it had (tests inject a failure). */
    public interface Eraser {
        String[] erase(long user) throws Exception;
    }

    /**
     * Erases the user's history (short and long forms, cache, buckets) and, with the mirror on, its
     * Redis keys: done by the one instance whose key groups hold the user, which also audits a
     * failure, since only it knows of one. The erasure of the Redis keys is remembered until Redis
     * confirms it ({@link MirrorDebt}).
     */
    public void forgetUser(long user, ControlRecord rec, CappingOutputs.Sink sink) {
        if (!owns.test(user)) {
            return;
        }
        boolean erased = false;
        try {
            keySetter.accept(user);
            String[] channels = eraser.erase(user);
            erased = true;
            lifetimes.clear(user);
            for (HeldDelivery h : held.withdraw(user, h -> true)) {
                sink.ended(Decision.FORGOTTEN, Withdrawn.forgotten(h, out.maxRecordBytes()), h);
            }
            LOG.info("forget-user: user {} erased ({} channels)", user, channels.length);
        } catch (Exception e) {
            LOG.error("forget-user of user {} failed", user, e);
            sink.notApplied(
                    rec,
                    "not applied: " + e.getClass().getSimpleName() + " while erasing user " + user);
        } finally {
            if (erased) {
                sink.erase(user); // the history is gone: so is the key, whatever failed after
            } else {
                sink.changed(user); // the key says what is left
            }
        }
    }

    /**
     * Withdraws the held messages a {@code cancel-held} names (contract.md §7): of one user, by the
     * instance that holds it, or of every user of every instance (a campaign's). Applied twice, the
     * second finds nothing.
     *
     * @param heldUsers every user of this instance with held messages
     * @param auditsControl whether this instance audits a failure of a command for every user
     */
    public void cancelHeld(
            Outcome.CancelHeld outcome,
            ControlRecord rec,
            HeldUsers heldUsers,
            boolean auditsControl,
            CappingOutputs.Sink sink) {
        ConfigRecord.CancelHeld c = outcome.command();
        List<Long> users = new ArrayList<>();
        try {
            if (c.userId() != null) {
                if (owns.test(c.userId())) {
                    users.add(c.userId());
                }
            } else {
                Set<Long> all = new LinkedHashSet<>();
                heldUsers.forEach(all::add);
                users.addAll(all);
            }
            long n = 0;
            for (long user : users) {
                keySetter.accept(user);
                n +=
                        cancel(
                                user,
                                h ->
                                        c.takes(
                                                        user,
                                                        h.message().campaignId(),
                                                        h.message().messageId())
                                                ? ConfigRecord.Command.CANCEL_HELD
                                                : null,
                                sink);
            }
            LOG.info("cancel-held of {}: {} held messages cancelled", c.describe(), n);
        } catch (Exception e) {
            LOG.error("cancel-held of {} failed", c.describe(), e);
            if (c.userId() != null ? owns.test(c.userId()) : auditsControl) {
                sink.notApplied(
                        rec,
                        "not applied: "
                                + e.getClass().getSimpleName()
                                + " while cancelling held messages");
            }
        }
    }

    /** Every user of this instance with held messages, each at least once. */
    public interface HeldUsers {
        void forEach(LongConsumer user) throws Exception;
    }

    /**
     * Cancels the held messages of {@code user} (the current key) that {@code reasonOf} gives a
     * reason for: each gets its CANCELLED record and stops counting, in the history and in Redis.
     *
     * @return how many
     */
    public int cancel(long user, Function<HeldDelivery, String> reasonOf, CappingOutputs.Sink sink)
            throws Exception {
        return cancelled(user, held.withdraw(user, h -> reasonOf.apply(h) != null), reasonOf, sink);
    }

    /**
     * Cancels the held messages of {@code user} (the current key) waiting under these keys (their
     * send time and fingerprint, as the history counts them): a point read each, no scan.
     */
    public int cancel(
            long user,
            List<HeldKey> keys,
            Function<HeldDelivery, String> reasonOf,
            CappingOutputs.Sink sink)
            throws Exception {
        List<HeldDelivery> found = held.waiting(user, keys);
        held.take(user, found);
        return cancelled(user, found, reasonOf, sink);
    }

    /** The records of held messages taken out: CANCELLED, un-counted, removed from Redis. */
    private int cancelled(
            long user,
            List<HeldDelivery> cancelled,
            Function<HeldDelivery, String> reasonOf,
            CappingOutputs.Sink sink)
            throws Exception {
        if (cancelled.isEmpty()) {
            return 0;
        }
        try {
            for (HeldDelivery h : cancelled) {
                histories.uncount(user, h.delivery().sendAt(), h.message().messageId());
                if (h.message().campaignId() != null) {
                    lifetimes.uncount(user, h.message().campaignId());
                }
                sink.ended(
                        Decision.CANCELLED,
                        Withdrawn.cancelled(h, reasonOf.apply(h), out.maxRecordBytes()),
                        h);
            }
        } finally {
            sink.changed(user); // also when one failed: those before it stopped counting
        }
        return cancelled.size();
    }
}
