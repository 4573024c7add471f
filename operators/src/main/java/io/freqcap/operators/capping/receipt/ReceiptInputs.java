package io.freqcap.operators.capping.receipt;

import io.freqcap.operators.capping.decision.Stores;
import io.freqcap.operators.capping.held.HeldMessages;
import io.freqcap.operators.capping.outputs.CappingMetrics;
import io.freqcap.operators.capping.outputs.CappingOutputs;
import io.freqcap.schema.held.HeldKey;
import io.freqcap.schema.message.FutureBound;
import io.freqcap.schema.receipt.DeliveryReceipt;
import java.util.List;

/**
 * The receipts topic, the Flink side (contract.md §11): a {@code failed} receipt un-counts the
 * message it names, if it is counted and not still held; an engagement ({@code opened}, {@code
 * clicked}) may become the user's last engagement, which a rule's {@code fatigue} reads (not one
 * stamped past the wall clock plus {@code maxFuture}). Decisions already made stand. What a receipt
 * does is the plain {@link Receipts}'; this reads it against keyed state and writes its effect.
 *
 * @param held the held messages, which say whether a counted message still waits
 */
public record ReceiptInputs(
        Stores stores, HeldMessages held, CappingMetrics metrics, FutureBound maxFuture) {

    /**
     * Applies a receipt of {@code user}, the current key.
     *
     * @param now the job's wall clock: an engagement's time when the receipt has none
     */
    public void apply(long user, DeliveryReceipt r, long now, CappingOutputs.Sink sink)
            throws Exception {
        Receipts.Effect effect =
                Receipts.of(
                        r,
                        user,
                        new Receipts.Time(
                                r.timestamp() == null ? now : r.timestamp(),
                                maxFuture.latest(System.currentTimeMillis())),
                        stores.histories(),
                        stores.engagements(),
                        (u, e) ->
                                !held.waiting(
                                                u,
                                                List.of(
                                                        new HeldKey(
                                                                e.timestamp(), e.fingerprint())))
                                        .isEmpty());
        effect.apply(stores);
        if (effect instanceof Receipts.Uncounted) {
            sink.changed(user);
            metrics.receiptsApplied.inc();
        } else if (effect instanceof Receipts.Engaged) {
            metrics.engagements.inc();
        } else {
            metrics.receiptsIgnored.inc();
        }
    }
}
