package io.freqcap.schema.preference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/**
 * Preferences in keyed state (format 1): what is written reads back equal, and bytes written by
 * this version (committed below) keep reading as the same preferences in every later one.
 */
class UserPreferencesSerializerTest {
    /** contract.md §10's example. */
    static final String EXAMPLE = UserPreferencesTest.EXAMPLE;

    /** The example as format 1 wrote it. */
    static final String EXAMPLE_FORMAT_1 =
            "01000000000000002a00000000000000030000000104736d7300000001067072"
                    + "6f6d6f010000019adc5be0000000000103376400000000240c84000000000300"
                    + "0000000106656d61696c0000000100000000002e593c0000000001057765656b"
                    + "000000010b6e6577736c6574746572000000010000000000a9f1dc0000000002"
                    + "066d6f6e7468";

    static UserPreferences parse(String json) throws Exception {
        return UserPreferences.parse(json.getBytes(StandardCharsets.UTF_8), null);
    }

    static byte[] write(UserPreferences p) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        UserPreferencesSerializer.INSTANCE.serialize(p, out);
        return out.getCopyOfBuffer();
    }

    static UserPreferences read(byte[] bytes) throws IOException {
        return UserPreferencesSerializer.INSTANCE.deserialize(new DataInputDeserializer(bytes));
    }

    @Test
    void roundTripsTheContractsExampleAndAnEmptyChoice() throws Exception {
        UserPreferences example = parse(EXAMPLE);
        assertEquals(example, read(write(example)));
        UserPreferences empty = parse("{\"userId\":7,\"version\":1}");
        assertEquals(empty, read(write(empty)));
    }

    @Test
    void bytesOfFormatOneReadAsTheyWereWritten() throws Exception {
        assertEquals(parse(EXAMPLE), read(HexFormat.of().parseHex(EXAMPLE_FORMAT_1)));
        // This version writes format 1; a new layout is format 2, which must read this one too.
        assertEquals(EXAMPLE_FORMAT_1, HexFormat.of().formatHex(write(parse(EXAMPLE))));
    }

    @Test
    void anUnknownFormatIsRefusedNeverMisread() {
        IOException e = assertThrows(IOException.class, () -> read(new byte[] {9, 0, 0}));
        assertTrue(e.getMessage().contains("format 9"), e.getMessage());
    }
}
