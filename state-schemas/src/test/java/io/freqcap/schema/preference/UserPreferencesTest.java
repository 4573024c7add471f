package io.freqcap.schema.preference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.SharedFiles;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.Limit;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A preferences record read as contract.md §10 says: what it holds, and what makes it unreadable.
 */
class UserPreferencesTest {
    /** The contract's example, {@code examples/user-preferences.json}. */
    static final String EXAMPLE =
            "{\"userId\": 42, \"version\": 3,"
                    + " \"optOut\": {\"channels\": [\"sms\"], \"categories\": [\"promo\"]},"
                    + " \"pausedUntil\": 1764633600000,"
                    + " \"limits\": [{\"window\": \"7d\", \"max\": 3}],"
                    + " \"channels\": {\"email\": [{\"calendar\": \"week\", \"max\": 1}]},"
                    + " \"categories\": {\"newsletter\": [{\"calendar\": \"month\", \"max\": 2}]}}";

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static UserPreferences read(String key, String value) throws MalformedRecordException {
        return ((PreferenceRecord.Update)
                        PreferenceRecord.read(key == null ? null : bytes(key), bytes(value)))
                .preferences();
    }

    static String error(String key, String value) {
        return assertThrows(
                        MalformedRecordException.class,
                        () ->
                                PreferenceRecord.read(
                                        key == null ? null : bytes(key),
                                        value == null ? null : bytes(value)))
                .getMessage();
    }

    @Test
    void readsTheContractsExample() throws Exception {
        UserPreferences p = read("42", EXAMPLE);
        assertEquals(42, p.userId());
        assertEquals(3, p.version());
        assertEquals(Set.of("sms"), p.optOutChannels());
        assertEquals(Set.of("promo"), p.optOutCategories());
        assertEquals(1_764_633_600_000L, p.pausedUntil());
        assertEquals(List.of(Limit.rolling("7d", 7 * 86_400_000L, 3)), p.limits());
        assertEquals(List.of(Limit.calendar("week", 1)), p.channels().get("email"));
        assertEquals(List.of(Limit.calendar("month", 2)), p.categories().get("newsletter"));
        assertTrue(p.optsOut("sms", "marketing"));
        assertTrue(p.optsOut("push", "promo"));
        assertTrue(!p.optsOut("push", "marketing"));
        assertEquals(
                p,
                read(
                        null,
                        new String(
                                SharedFiles.read("contract/examples/user-preferences.json"),
                                StandardCharsets.UTF_8)));
    }

    @Test
    void nullReadsAsAbsentAndUnknownFieldsAreIgnored() throws Exception {
        UserPreferences p =
                read(
                        null,
                        "{\"userId\": 7, \"version\": 1, \"optOut\": null, \"pausedUntil\": null,"
                                + " \"limits\": null, \"channels\": null, \"theme\": \"dark\"}");
        assertEquals(Set.of(), p.optOutChannels());
        assertNull(p.pausedUntil());
        assertEquals(List.of(), p.limits());
        assertEquals(0, p.channels().size());
    }

    @Test
    void aTombstoneClearsTheKeysUser() throws Exception {
        assertEquals(new PreferenceRecord.Clear(42), PreferenceRecord.read(bytes("42"), null));
        assertInstanceOf(
                PreferenceRecord.Update.class, PreferenceRecord.read(null, bytes(EXAMPLE)));
    }

    @Test
    void unreadableRecordsSayWhatIsWrong() {
        assertEquals("a tombstone without a key names no user", error(null, null));
        assertTrue(error("43", EXAMPLE).contains("is not the record's key 43"));
        assertTrue(error("user-42", EXAMPLE).startsWith("key: expected a userId"));
        assertTrue(error(null, "{\"version\": 1}").startsWith("userId: required"));
        assertTrue(error(null, "{\"userId\": 1, \"version\": 0}").startsWith("version:"));
        assertTrue(error(null, "{\"userId\": 1, \"version\": \"2\"}").startsWith("version:"));
        assertTrue(
                error(null, "{\"userId\": 1, \"version\": 1, \"optOut\": [\"sms\"]}")
                        .startsWith("optOut:"));
        assertTrue(
                error(
                                null,
                                "{\"userId\": 1, \"version\": 1, \"optOut\": {\"channels\": [\"SMS\"]}}")
                        .startsWith("optOut.channels[0]:"));
        assertTrue(
                error(null, "{\"userId\": 1, \"version\": 1, \"pausedUntil\": -5}")
                        .startsWith("pausedUntil:"));
        assertTrue(
                error(
                                null,
                                "{\"userId\": 1, \"version\": 1, \"limits\": [{\"window\": \"1d\","
                                        + " \"max\": 3, \"reserve\": {\"slots\": 1, \"priority\": 50}}]}")
                        .equals("limits[0].reserve: not allowed here"));
        assertTrue(
                error(
                                null,
                                "{\"userId\": 1, \"version\": 1, \"limits\": [{\"window\": \"91d\", \"max\": 1}]}")
                        .startsWith("limits[0].window"));
        assertTrue(error(null, "[1, 2]").contains("expected a JSON object"));
        StringBuilder many = new StringBuilder("[");
        for (int i = 0; i < 65; i++) {
            many.append(i > 0 ? "," : "").append("\"c").append(i).append('"');
        }
        assertTrue(
                error(
                                null,
                                "{\"userId\": 1, \"version\": 1, \"optOut\": {\"categories\": "
                                        + many
                                        + "]}}")
                        .contains("at most 64 names, got 65"));
    }

    @Test
    void categoriesAreAnyAMessageMayCarryMeasuredInCodePoints() throws Exception {
        String longest = "\uD83D\uDE00".repeat(64); // 64 astral code points, 128 chars
        UserPreferences p =
                read(
                        "1",
                        "{\"userId\": 1, \"version\": 1, \"optOut\": {\"categories\":"
                                + " [\"Weekly Newsletter\", \""
                                + longest
                                + "\"]}, \"categories\": {\"Weekly Newsletter\":"
                                + " [{\"calendar\": \"month\", \"max\": 2}]}}");
        assertTrue(p.optsOut("email", "Weekly Newsletter"));
        assertTrue(p.optsOut("email", longest));
        assertEquals(1, p.categories().get("Weekly Newsletter").size());
        assertTrue(
                error(
                                null,
                                "{\"userId\": 1, \"version\": 1, \"optOut\": {\"categories\": [\""
                                        + longest
                                        + "x\"]}}")
                        .startsWith("optOut.categories[0]: expected a category of 1..64"));
        assertTrue(
                error(null, "{\"userId\": 1, \"version\": 1, \"optOut\": {\"categories\": [\"\"]}}")
                        .startsWith("optOut.categories[0]:"));
        assertTrue(
                error(null, "{\"userId\": 1, \"version\": 1, \"categories\": {\"\": []}}")
                        .contains("category names must be 1..64"));
        // Channels keep the channel pattern.
        assertTrue(
                error(
                                null,
                                "{\"userId\": 1, \"version\": 1, \"optOut\": {\"channels\": [\"Sms\"]}}")
                        .startsWith("optOut.channels[0]:"));
    }
}
