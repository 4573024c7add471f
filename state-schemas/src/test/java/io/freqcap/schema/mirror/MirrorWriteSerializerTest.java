package io.freqcap.schema.mirror;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class MirrorWriteSerializerTest {
    static final MirrorWriteSerializer SERIALIZER = MirrorWriteSerializer.INSTANCE;

    @Test
    void backlogEntriesRoundTrip() throws IOException {
        MirrorLog log = new MirrorLog();
        log.add(1_763_812_800_000L, "push", "m-\u00e9");
        log.add(1_763_812_800_001L, "email", "m-2");
        MirrorWrite set = log.write(42, 86_400_000L);
        MirrorWrite forget = MirrorWrite.deletion(7, 123_456_789L);
        MirrorWrite legacy = MirrorWrite.deletion(8, 5, "push", "email");
        MirrorWrite emptied = MirrorWrite.deletion(9, 0);
        for (MirrorWrite w : new MirrorWrite[] {set, forget, legacy, emptied}) {
            assertEquals(w, SERIALIZER.deserialize(4, SERIALIZER.serialize(w)));
        }
        assertEquals(2, set.size());
        assertEquals(1, forget.size(), "a deletion weighs one in the backlog");
        assertEquals(1_763_812_800_001L + 86_400_000L, set.expireAt());
    }

    /**
     * Writer state of format v2 (layout 1, as checkpoints of version 5 and before hold it): it
     * cannot be said in layout 2, so it restores as the marker that makes the writer owe a rebuild.
     */
    static final String V2_HELD_WRITE =
            "000000000000002a0000000005265c000000000000000003e8000000020003736d73"
                    + "000470757368000000010000000000000000000013880003682d31";

    static final String V1_REBUILD_WRITE =
            "00000000000000070000000005265c0001000000020004707573680005656d61696c0000000300000001"
                    + "0000019aab6f760000036d2d31000000000000019aab6f760100046d2dc3a900000001"
                    + "0000019ab095d20000036d2d33";

    @Test
    void backlogsOfLayoutOneRestoreAsARebuild() throws IOException {
        assertEquals(4, SERIALIZER.getVersion());
        assertSame(
                MirrorWriteSerializer.LEGACY,
                SERIALIZER.deserialize(2, HexFormat.of().parseHex(V2_HELD_WRITE)));
        assertSame(
                MirrorWriteSerializer.LEGACY,
                SERIALIZER.deserialize(1, HexFormat.of().parseHex(V1_REBUILD_WRITE)));
    }

    @Test
    void keysAreOnePerUser() {
        assertEquals("fc:{1}", MirrorWrite.userKey("fc", 1));
        assertEquals("fc:{1}:push", MirrorWrite.legacyChannelKey("fc", 1, "push"));
        assertThrows(
                IllegalArgumentException.class,
                () -> new MirrorWrite(1, null, 0, 3, 0, null),
                "a deletion has no entries");
    }

    @Test
    void corruptOrUnknownBacklogFailsClearly() throws IOException {
        MirrorLog log = new MirrorLog();
        log.add(5, "push", "m");
        byte[] bytes = SERIALIZER.serialize(log.write(1, 10));
        byte[] truncated = Arrays.copyOf(bytes, 20);
        IOException e = assertThrows(IOException.class, () -> SERIALIZER.deserialize(4, truncated));
        assertTrue(e.getMessage().startsWith("corrupt mirror backlog entry"), e.getMessage());
        byte[] longer = bytes.clone();
        longer[11] = 0x7f; // the log's length
        e = assertThrows(IOException.class, () -> SERIALIZER.deserialize(4, longer));
        assertTrue(e.getMessage().contains("length"), e.getMessage());
        assertThrows(IOException.class, () -> SERIALIZER.deserialize(5, bytes));
        assertEquals(
                "{\"v\": 2, \"log\": [[5, \"push\", \"m\"]]}",
                new String(SERIALIZER.deserialize(4, bytes).log(), StandardCharsets.UTF_8));
    }
}
