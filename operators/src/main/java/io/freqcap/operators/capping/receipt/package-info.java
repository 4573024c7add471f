/**
 * Delivery receipts (contract.md §11), failed and engagement ones: what a receipt does ({@link
 * io.freqcap.operators.capping.receipt.Receipts}, plain Java, the same in the job and a backtest)
 * and the receipts topic's Flink side ({@link io.freqcap.operators.capping.receipt.ReceiptInputs}).
 * A rule's {@code fatigue} reads the last engagement they keep: its rule is {@code
 * rule.FatigueRule}, its store {@code fatigue.EngagementStore}.
 */
package io.freqcap.operators.capping.receipt;
