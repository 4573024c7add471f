package io.freqcap.schema.common;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.junit.jupiter.api.Test;

class Utf8StringsTest {
    private static String read(String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return Utf8Strings.read(new DataInputDeserializer(b), b.length);
    }

    @Test
    void readingTheSameBytesAgainGivesTheSameString() throws IOException {
        String first = read("spring-sale");
        assertEquals("spring-sale", first);
        assertSame(first, read("spring-sale"));
        assertSame(Utf8Strings.bytes(first), Utf8Strings.bytes(new String("spring-sale")));
    }

    @Test
    void manyStringsSharingSlotsStayCorrect() throws IOException {
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 20_000; i++) {
                String s = (i % 3 == 0 ? "caf\u00e9-" : "c") + i;
                assertEquals(s, read(s));
                assertArrayEquals(s.getBytes(StandardCharsets.UTF_8), Utf8Strings.bytes(s));
            }
        }
    }

    @Test
    void theTableIsBoundedInBytesWhateverTheStrings() throws IOException {
        for (int i = 0; i < 20_000; i++) {
            String s = i + "-" + "x".repeat(i % 2 == 0 ? 60 : 1_000_000 / 20_000 * 100);
            assertEquals(s, read(s));
            assertArrayEquals(s.getBytes(StandardCharsets.UTF_8), Utf8Strings.bytes(s));
        }
        long bound = (long) Utf8Strings.SIZE * Utf8Strings.MAX_CACHED_BYTES;
        org.junit.jupiter.api.Assertions.assertTrue(
                Utf8Strings.bytesHeld() <= bound, Utf8Strings.bytesHeld() + " > " + bound);
        String big = "y".repeat(1 << 20);
        assertEquals(big, read(big));
        org.junit.jupiter.api.Assertions.assertTrue(Utf8Strings.bytesHeld() <= bound);
    }
}
