package io.freqcap.operators.capping.preference;

import io.freqcap.operators.capping.decision.Receipts;
import io.freqcap.operators.capping.decision.Stores;
import io.freqcap.operators.capping.held.HeldMessages;
import io.freqcap.operators.capping.held.Withdrawals;
import io.freqcap.operators.capping.outputs.CappingMetrics;
import io.freqcap.operators.capping.outputs.CappingOutputs;
import io.freqcap.operators.capping.rule.PreferenceRule;
import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.decision.AuditRecords;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldKey;
import io.freqcap.schema.message.FutureBound;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.preference.PreferenceRecord;
import io.freqcap.schema.preference.UserPreferences;
import io.freqcap.schema.receipt.DeliveryReceipt;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a user and the sender say, for {@link CappingFunction}: a record of the preferences topic
 * (contract.md §10) puts the user's choice in force and cancels the held messages it rules out; a
 * {@code failed} receipt (§11) un-counts the message it names, an engagement receipt may become the
 * user's last engagement (not one stamped past the wall clock plus {@code maxFuture}). Each arrives
 * keyed by its user, who is the current key. An unreadable record, or one whose application throws,
 * becomes one INVALID_CONTROL record with its source; nothing here stops the job.
 */
public record UserInputs(
        Stores stores,
        HistoryStore histories,
        HeldMessages held,
        PreferenceStore preferences,
        Withdrawals withdrawals,
        CappingMetrics metrics,
        CappingOutputs out,
        FutureBound maxFuture) {
    private static final Logger LOG = LoggerFactory.getLogger(UserInputs.class);

    /**
     * Applies a record of the preferences or receipts topic.
     *
     * @param now the job's wall clock: which held messages still wait
     */
    public void apply(InboundMessage in, long now, CappingOutputs.Sink sink) {
        if (in.isMalformed()) {
            invalid(in, in.error(), sink);
            return;
        }
        try {
            if (in.kind() == InboundMessage.Kind.PREFERENCE) {
                preference(PreferenceRecord.read(in.key(), in.value()), now, sink);
            } else {
                receipt(in.routingKey(), DeliveryReceipt.parse(in.value()), now, sink);
            }
        } catch (MalformedRecordException e) {
            invalid(in, e.getMessage(), sink); // read once already: only a changed reader
        } catch (Exception e) {
            LOG.error("{} of user {} not applied", in.kind(), in.routingKey(), e);
            invalid(in, "not applied: " + e.getClass().getSimpleName(), sink);
        }
    }

    private void preference(PreferenceRecord r, long now, CappingOutputs.Sink sink)
            throws Exception {
        if (r instanceof PreferenceRecord.Clear c) {
            count(preferences.clear(c.userId()));
            return;
        }
        UserPreferences p = ((PreferenceRecord.Update) r).preferences();
        PreferenceStore.Change change = preferences.update(p);
        count(change);
        if (change != PreferenceStore.Change.APPLIED
                || (p.pausedUntil() == null
                        && p.optOutChannels().isEmpty()
                        && p.optOutCategories().isEmpty())) {
            return;
        }
        Function<HeldDelivery, String> reason =
                h -> PreferenceRule.cancels(p, h.channel(), h.category(), h.sendAt());
        if (held.hasLegacy()) {
            // freqcap 0.3's held lists are not in the history: read them all
            withdrawals.cancel(p.userId(), reason, sink);
            return;
        }
        // The history says which held messages wait, with their channel, category and send
        // time: only those the choice rules out are read, so a flood of one user's preferences
        // costs what messages cost, however many the user has waiting.
        List<HeldKey> ruledOut = new ArrayList<>();
        histories
                .get(p.userId())
                .forEachHeldWaitingEntry(
                        now,
                        e -> {
                            if (PreferenceRule.cancels(p, e.channel(), e.category(), e.timestamp())
                                    != null) {
                                ruledOut.add(new HeldKey(e.timestamp(), e.fingerprint()));
                            }
                        });
        if (!ruledOut.isEmpty()) {
            withdrawals.cancel(p.userId(), ruledOut, reason, sink);
        }
    }

    private void count(PreferenceStore.Change change) {
        if (change == PreferenceStore.Change.APPLIED) {
            metrics.preferencesApplied.inc();
        } else {
            metrics.preferencesIgnored.inc();
        }
    }

    /**
     * Applies a receipt ({@link Receipts}): a {@code failed} one un-counts the message it names, if
     * it is counted and not still held; an engagement may become the user's last (contract.md §11).
     * Decisions already made stand.
     *
     * @param now the job's wall clock: an engagement's time when the receipt has none
     */
    private void receipt(long user, DeliveryReceipt r, long now, CappingOutputs.Sink sink)
            throws Exception {
        Receipts.Effect effect =
                Receipts.of(
                        r,
                        user,
                        new Receipts.Time(
                                r.timestamp() == null ? now : r.timestamp(),
                                maxFuture.latest(System.currentTimeMillis())),
                        histories,
                        stores.engagements(),
                        (u, e) ->
                                !held.waiting(
                                                u,
                                                List.of(
                                                        new HeldKey(
                                                                e.timestamp(), e.fingerprint())))
                                        .isEmpty());
        stores.apply(effect);
        if (effect instanceof Receipts.Uncounted u) {
            sink.changed(user);
            metrics.receiptsApplied.inc();
        } else if (effect instanceof Receipts.Engaged) {
            metrics.engagements.inc();
        } else {
            metrics.receiptsIgnored.inc();
        }
    }

    private void invalid(InboundMessage in, String error, CappingOutputs.Sink sink) {
        sink.audit(
                Decision.INVALID_CONTROL,
                AuditRecords.unreadable(
                        Decision.INVALID_CONTROL,
                        error,
                        in.value(),
                        in.topic(),
                        in.partition(),
                        in.offset(),
                        out.maxRecordBytes()));
    }
}
