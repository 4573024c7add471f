package io.freqcap.schema.mirror;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Arrays;
import java.util.HexFormat;
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
        MirrorWrite held = MirrorWrite.counted(42, 86_400_000L, 1_000, "h-1", 5_000, "sms", "push");
        MirrorWrite removal =
                MirrorWrite.removal(42, 10, new String[] {"a", "b"}, new String[] {"sms", "push"});
        MirrorWrite knowing = held.withHighestScore(9_000);
        for (MirrorWrite w : new MirrorWrite[] {one, rebuild, held, removal, knowing}) {
            assertEquals(w, SERIALIZER.deserialize(3, SERIALIZER.serialize(w)));
        }
        assertEquals(
                9_000, SERIALIZER.deserialize(3, SERIALIZER.serialize(knowing)).highestScore());
    }

    /**
     * Writer state of format v2, as checkpoints of the versions between 0.3 and plain mirror
     * commands hold it (a held message's write, trimming from 1000): it reads back as a write that
     * does not know the user's highest score, which the script then reads in Redis.
     */
    static final String V2_HELD_WRITE =
            "000000000000002a0000000005265c000000000000000003e8000000020003736d73"
                    + "000470757368000000010000000000000000000013880003682d31";

    @Test
    void backlogFormatV2IsFixed() throws IOException {
        MirrorWrite read = SERIALIZER.deserialize(2, HexFormat.of().parseHex(V2_HELD_WRITE));
        assertEquals(
                MirrorWrite.counted(42, 86_400_000L, 1_000, "h-1", 5_000, "sms", "push"), read);
        assertEquals(MirrorWrite.UNKNOWN_SCORE, read.highestScore());
        assertTrue(!read.knowsHighestScore());
    }

    /**
     * Writer state of format v1, as checkpoints and savepoints of freqcap 0.3 hold it: these bytes
     * must keep reading back for as long as v1 is restorable (as a write that trims from its latest
     * entry, as v1's script did).
     */
    static final String V1_REBUILD_WRITE =
            "00000000000000070000000005265c0001000000020004707573680005656d61696c0000000300000001"
                    + "0000019aab6f760000036d2d31000000000000019aab6f760100046d2dc3a900000001"
                    + "0000019ab095d20000036d2d33";

    @Test
    void backlogFormatV1IsFixed() throws IOException {
        MirrorWrite rebuild =
                new MirrorWrite(
                        7,
                        86_400_000L,
                        true,
                        new String[] {"push", "email"},
                        new int[] {1, 0, 1},
                        new long[] {1_763_812_800_000L, 1_763_812_800_001L, 1_763_899_200_000L},
                        new String[] {"m-1", "m-\u00e9", "m-3"});
        assertEquals(3, SERIALIZER.getVersion());
        MirrorWrite read = SERIALIZER.deserialize(1, HexFormat.of().parseHex(V1_REBUILD_WRITE));
        assertEquals(rebuild, read);
        assertEquals(MirrorWrite.Kind.REPLACE, read.kind());
        assertEquals(1_763_899_200_000L, read.latestStamped());
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
        // user, window, kind, latestStamped, 1 channel ("push"), 1 entry, then its channel index
        int channelIndex = 8 + 8 + 1 + 8 + 4 + (2 + 4) + 4;
        bytes[channelIndex + 3] = 9;
        IOException e = assertThrows(IOException.class, () -> SERIALIZER.deserialize(3, bytes));
        assertTrue(e.getMessage().contains("channel index 9"), e.getMessage());
        byte[] truncated = Arrays.copyOf(bytes, 20);
        e = assertThrows(IOException.class, () -> SERIALIZER.deserialize(3, truncated));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        bytes[16] = 7;
        e = assertThrows(IOException.class, () -> SERIALIZER.deserialize(3, bytes));
        assertTrue(e.getMessage().contains("kind 7"), e.getMessage());
        assertThrows(IOException.class, () -> SERIALIZER.deserialize(4, bytes));
    }
}
