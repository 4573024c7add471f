package io.freqcap.operators.capping.preference;

import io.freqcap.operators.capping.held.Withdrawals;
import io.freqcap.operators.capping.outputs.CappingMetrics;
import io.freqcap.operators.capping.outputs.CappingOutputs;
import io.freqcap.operators.capping.rule.PreferenceRule;
import io.freqcap.operators.capping.state.HistoryStore;
import io.freqcap.schema.held.HeldDelivery;
import io.freqcap.schema.held.HeldKey;
import io.freqcap.schema.preference.PreferenceRecord;
import io.freqcap.schema.preference.UserPreferences;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The preferences topic, the Flink side (contract.md §10): a record puts the user's choice in force
 * and cancels the held messages it rules out. Each arrives keyed by its user, who is the current
 * key.
 */
public record PreferenceInputs(
        HistoryStore histories,
        PreferenceStore preferences,
        Withdrawals withdrawals,
        CappingMetrics metrics) {

    /**
     * Applies a record of the preferences topic.
     *
     * @param now the job's wall clock: which held messages still wait
     */
    public void apply(PreferenceRecord r, long now, CappingOutputs.Sink sink) throws Exception {
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
                h ->
                        PreferenceRule.cancels(
                                p,
                                h.message().channel(),
                                h.message().category(),
                                h.delivery().sendAt());
        if (withdrawals.held().hasLegacy()) {
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
}
