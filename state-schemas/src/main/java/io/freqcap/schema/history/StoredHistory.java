package io.freqcap.schema.history;

/**
 * A user's short history as the capping operator's keyed state ({@code history-v1}) holds it:
 * decoded ({@link UserHistory}) or as the bytes {@link UserHistorySerializer} wrote ({@link
 * EncodedHistory}). Both are written to state byte for byte the same way, by {@link
 * StoredHistorySerializer}, state always reads back decoded, and {@link
 * StoredHistorySerializer#decoded} gives either form decoded.
 *
 * <p>Why two forms: the operator keeps recent histories serialized in a cache and writes the
 * changed ones to keyed state before every checkpoint; handing state the cache's bytes as they are
 * spares a decode and an encode of each. {@link UserHistory} is one of the forms, so state restored
 * on the heap from savepoints written before this type existed (which hold {@link UserHistory}
 * objects) is still of this type.
 */
public interface StoredHistory {
    // No methods: a method naming UserHistory would make the two depend on each other. Decode with
    // StoredHistorySerializer.decoded. Only UserHistory and EncodedHistory implement it.
}
