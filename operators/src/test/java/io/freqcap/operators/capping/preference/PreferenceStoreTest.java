package io.freqcap.operators.capping.preference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.preference.UserPreferences;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.state.ValueState;
import org.junit.jupiter.api.Test;

/** The preference cache is bounded in bytes as well as in users (issue 46). */
class PreferenceStoreTest {
    /** Keyed state for one key at a time, as the operator sets it. */
    static final class KeyedValues implements ValueState<UserPreferences> {
        final Map<Long, UserPreferences> values = new HashMap<>();
        long key;

        @Override
        public UserPreferences value() {
            return values.get(key);
        }

        @Override
        public void update(UserPreferences value) {
            values.put(key, value);
        }

        @Override
        public void clear() {
            values.remove(key);
        }
    }

    /** 64 opted-out categories of 64 astral characters: the largest a record may opt out of. */
    static UserPreferences maximal(long user) {
        Set<String> categories = new LinkedHashSet<>();
        for (int i = 0; i < 64; i++) {
            categories.add(i + "\uD83D\uDE00".repeat(62));
        }
        return new UserPreferences(
                user, 1, Set.of(), categories, null, List.of(), Map.of(), Map.of());
    }

    @Test
    void largePreferencesStayWithinTheCachesBytesAndAreStillReadFromState() throws Exception {
        KeyedValues state = new KeyedValues();
        long bound = 200_000;
        PreferenceStore store = new PreferenceStore(state, bound);
        long one = PreferenceStore.weight(maximal(0));
        assertTrue(one > 16_000, "a maximal record weighs what it holds: " + one);
        for (long user = 0; user < 1_000; user++) {
            state.key = user;
            store.update(maximal(user));
            assertTrue(store.cachedBytes() <= bound, store.cachedBytes() + " bytes cached");
        }
        assertEquals(bound / one, store.cachedUsers(), "as many as fit");
        for (long user = 0; user < 1_000; user += 97) {
            state.key = user;
            assertEquals(maximal(user), store.of(user), "read back, cached or not");
            assertTrue(store.cachedBytes() <= bound);
        }
        state.key = 5;
        store.clear(5);
        assertEquals(null, store.of(5));
        assertTrue(store.cachedBytes() <= bound);
    }

    @Test
    void smallPreferencesAreCachedUpToTheUserBound() throws Exception {
        KeyedValues state = new KeyedValues();
        PreferenceStore store = new PreferenceStore(state, Long.MAX_VALUE);
        for (long user = 0; user < PreferenceStore.CACHED + 10; user++) {
            state.key = user;
            store.update(
                    new UserPreferences(
                            user, 1, Set.of("sms"), Set.of(), null, List.of(), Map.of(), Map.of()));
        }
        assertEquals(PreferenceStore.CACHED, store.cachedUsers());
    }
}
