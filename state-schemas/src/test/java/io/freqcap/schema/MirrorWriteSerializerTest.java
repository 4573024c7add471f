package io.freqcap.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class MirrorWriteSerializerTest {
    static final MirrorWriteSerializer SERIALIZER = MirrorWriteSerializer.INSTANCE;

    @Test
    void backlogEntriesRoundTrip() throws IOException {
        MirrorWrite one = MirrorWrite.of(42, 604_800_000L, "m-\u00e9", 1_763_812_800_000L, "push");
        MirrorWrite rebuild =
                new MirrorWrite(
                        7,
                        86_400_000L,
                        true,
                        new String[] {"push", "email"},
                        new int[] {1, 0, 1},
                        new long[] {1, 2, 3},
                        new String[] {"a", "b", "c"});
        for (MirrorWrite w : new MirrorWrite[] {one, rebuild}) {
            assertEquals(w, SERIALIZER.deserialize(1, SERIALIZER.serialize(w)));
        }
    }

    @Test
    void aWriteNamesEachChannelOnce() {
        MirrorWrite w = MirrorWrite.of(1, 10, "m", 5, "push", "email", "push", "sms");
        assertEquals("[push, email, sms]", Arrays.toString(w.channels()));
        assertEquals("fc:{1}", MirrorWrite.userKey("fc", 1));
        assertEquals("fc:{1}:push", MirrorWrite.channelKey("fc", 1, "push"));
    }

    @Test
    void corruptOrUnknownBacklogFailsClearly() throws IOException {
        byte[] bytes = SERIALIZER.serialize(MirrorWrite.of(1, 10, "m", 5, "push"));
        // user, window, replace, 1 channel ("push"), 1 entry, then its channel index (an int)
        int channelIndex = 8 + 8 + 1 + 4 + (2 + 4) + 4;
        bytes[channelIndex + 3] = 9;
        IOException e = assertThrows(IOException.class, () -> SERIALIZER.deserialize(1, bytes));
        assertTrue(e.getMessage().contains("channel index 9"), e.getMessage());
        byte[] truncated = Arrays.copyOf(bytes, 20);
        e = assertThrows(IOException.class, () -> SERIALIZER.deserialize(1, truncated));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        assertThrows(IOException.class, () -> SERIALIZER.deserialize(2, bytes));
    }
}
