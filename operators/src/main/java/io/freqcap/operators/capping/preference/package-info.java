/**
 * The user's say, the Flink side (contract.md §10): records of the preferences topic arrive on the
 * keyed input under their user. {@link io.freqcap.operators.capping.preference.PreferenceInputs}
 * puts a user's preferences in force ({@link
 * io.freqcap.operators.capping.preference.PreferenceStore}, which every decision of that user
 * reads) and cancels the held messages they rule out. What a preference does to a message is the
 * plain rule's: {@code rule.PreferenceRule}. Receipts have their room beside it: {@code receipt}.
 */
package io.freqcap.operators.capping.preference;
