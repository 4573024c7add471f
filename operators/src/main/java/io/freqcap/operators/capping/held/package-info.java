/**
 * Held messages, the Flink side (contract.md §5, §6, §7): a message ALLOWED with a later send time
 * (a rule's {@code hold}) waits in keyed state ({@link
 * io.freqcap.operators.capping.held.HeldMessages}) for a processing-time timer of its own at that
 * time, numbered in the order held ({@link io.freqcap.operators.capping.held.HoldNumbers}) and
 * counted per key group ({@link io.freqcap.operators.capping.held.HeldCounts}). {@code forget-user}
 * turns it into a FORGOTTEN record, {@code cancel-held} into a CANCELLED one ({@link
 * io.freqcap.operators.capping.held.Withdrawals}); either way it stops counting (history, Redis). A
 * message of a {@code preempt} rule may take the place of held messages of lower priority: the
 * decision says which, and they end as PREEMPTED records in the same step, so a checkpoint has
 * either both or neither.
 */
package io.freqcap.operators.capping.held;
