/**
 * The user's say and the sender's word, the Flink side (contract.md §10, §11): records of the
 * preferences and receipts topics arrive on the keyed input under their user. {@link
 * io.freqcap.operators.capping.preference.UserInputs} puts a user's preferences in force ({@link
 * io.freqcap.operators.capping.preference.PreferenceStore}, which every decision of that user
 * reads) and cancels the held messages they rule out, and un-counts a message whose delivery
 * failed. What a preference does to a message is the plain rule's: {@code rule.PreferenceRule}.
 */
package io.freqcap.operators.capping.preference;
