package io.freqcap.schema.mirror;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.SharedFiles;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MirrorLogTest {
    static final long DAY = 86_400_000L;

    static MirrorLog one() {
        MirrorLog log = new MirrorLog();
        log.add(1763799300000L, "push", "m-\"000371");
        return log;
    }

    private static String text(MirrorLog log) {
        return new String(log.encode(), StandardCharsets.UTF_8);
    }

    @Test
    void writesTheContractsExampleByteForByte() throws Exception {
        MirrorLog log = new MirrorLog();
        log.add(1763881200000L, "push", "m-000412"); // held: its send time, added first
        log.add(1763799300000L, "push", "m-000371");
        String expected =
                "{\"v\": 2, \"log\": [[1763799300000, \"push\", \"m-000371\"],"
                        + " [1763881200000, \"push\", \"m-000412\"]]}";
        assertEquals(expected, text(log));
        String example =
                new String(
                        SharedFiles.read("contract/examples/redis-log.json"),
                        StandardCharsets.UTF_8);
        assertEquals(example.strip(), expected);
    }

    @Test
    void ordersEqualScoresByMessageIdInCodePoints() {
        MirrorLog log = new MirrorLog();
        // U+1F600 is one code point above U+FFFD, but its first UTF-16 unit (D83D) is below it
        log.add(7, "push", "\uFFFD");
        log.add(7, "push", "\uD83D\uDE00");
        log.add(7, "sms", "a");
        log.add(3, "email", "z");
        List<MirrorLog.Entry> read = MirrorLog.decode(log.encode());
        assertEquals(
                List.of("z", "a", "\uFFFD", "\uD83D\uDE00"),
                read.stream().map(MirrorLog.Entry::messageId).toList());
    }

    @Test
    void escapesWhatJsonMustAndReadsItBack() {
        MirrorLog log = new MirrorLog();
        String id = "q\"b\\s\n\t\u0001/é\uD83D\uDE00";
        log.add(Long.MAX_VALUE, "a-b_1", id);
        log.add(0, "push", "x".repeat(128));
        assertTrue(text(log).contains("q\\\"b\\\\s\\n\\t\\u0001/é"), text(log));
        List<MirrorLog.Entry> read = MirrorLog.decode(log.encode());
        assertEquals(new MirrorLog.Entry(Long.MAX_VALUE, "a-b_1", id), read.get(1));
        assertEquals(Long.MAX_VALUE, log.write(1, DAY).expireAt(), "saturates, never wraps");
    }

    @Test
    void expiresAWindowAfterTheHighestScoreAndAnEmptyLogIsADeletion() {
        MirrorLog log = new MirrorLog();
        assertTrue(log.write(5, DAY).deletes());
        log.add(100, "push", "a");
        log.add(50, "push", "b");
        MirrorWrite w = log.write(5, DAY);
        assertEquals(100 + DAY, w.expireAt());
        assertEquals(2, w.entries());
    }

    @Test
    void randomLogsReadBackInOrder() {
        Random r = new Random(57);
        for (int round = 0; round < 200; round++) {
            MirrorLog log = new MirrorLog();
            int n = r.nextInt(20);
            for (int i = 0; i < n; i++) {
                StringBuilder id = new StringBuilder();
                for (int k = 1 + r.nextInt(5); k > 0; k--) {
                    id.appendCodePoint(
                            r.nextInt(4) == 0 ? 0x1F600 + r.nextInt(3) : 0x20 + r.nextInt(0x7F));
                }
                log.add(r.nextInt(5), "push", id.toString());
            }
            List<MirrorLog.Entry> read = MirrorLog.decode(log.encode());
            assertEquals(n, read.size());
            for (int i = 1; i < read.size(); i++) {
                assertTrue(MirrorLog.ORDER.compare(read.get(i - 1), read.get(i)) <= 0);
            }
        }
    }

    @Test
    void refusesWhatIsNotALog() {
        byte[] cut = java.util.Arrays.copyOf(MirrorLogTest.one().encode(), 20);
        assertThrows(IllegalArgumentException.class, () -> MirrorLog.decode(cut));
        assertThrows(
                IllegalArgumentException.class,
                () -> MirrorLog.decode("{\"v\": 1, \"log\": []}".getBytes(StandardCharsets.UTF_8)));
    }
}
