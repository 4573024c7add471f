package io.freqcap.job.tools.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code freqcap-query}'s reading of the preferences topic agrees with the job's (§10). */
class PreferenceLookupTest {
    static byte[][] record(String key, String value) {
        return new byte[][] {
            key == null ? null : key.getBytes(StandardCharsets.UTF_8),
            value == null ? null : value.getBytes(StandardCharsets.UTF_8)
        };
    }

    @Test
    void theHighestVersionWinsATombstoneClearsAndBadRecordsChangeNothing() {
        String v2 = "{\"userId\":42,\"version\":2,\"optOut\":{\"channels\":[\"sms\"]}}";
        List<byte[][]> topic =
                List.of(
                        record("42", "{\"userId\":42,\"version\":1}"),
                        record("42", v2),
                        record("42", "{\"userId\":42,\"version\":1,\"pausedUntil\":5}"),
                        record("43", "{\"userId\":43,\"version\":9}"),
                        record("42", "{not json"),
                        record(null, null));
        PreferenceLookup.Found f = PreferenceLookup.fold(topic, 42);
        assertEquals(2, f.preferences().version());
        assertEquals(v2, f.json());
        assertEquals(3, f.records());
        assertEquals(2, f.unreadable());

        List<byte[][]> cleared = new java.util.ArrayList<>(topic);
        cleared.add(record("42", null));
        assertNull(PreferenceLookup.fold(cleared, 42).preferences());
        cleared.add(record(null, "{\"userId\":42,\"version\":1}"));
        assertEquals(1, PreferenceLookup.fold(cleared, 42).preferences().version());
    }
}
