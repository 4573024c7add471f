package io.freqcap.job.tools.simulate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.JobSettings;
import io.freqcap.operators.capping.Bounds;
import io.freqcap.schema.message.RawRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;

/** The input read ahead on its own thread reaches the decisions whole, in order, failures too. */
class ParsedAheadTest {
    private static final Bounds BOUNDS = JobSettings.bounds(new Configuration());

    /** {@code records} lines m-0, m-1, ..., then the end or {@code failure}. */
    private static SimulationInput lines(int records, IOException failure) {
        return new SimulationInput() {
            int i;

            @Override
            public RawRecord next() throws IOException {
                if (i == records) {
                    if (failure != null) {
                        throw failure;
                    }
                    return null;
                }
                String line =
                        "{\"messageId\":\"m-"
                                + i
                                + "\",\"userId\":"
                                + (i % 7)
                                + ",\"channel\":\"push\",\"category\":\"marketing\","
                                + "\"timestamp\":1763769600000}";
                return new RawRecord(
                        null, line.getBytes(StandardCharsets.UTF_8), "input.jsonl", 0, i++);
            }

            @Override
            public void close() {}
        };
    }

    @Test
    void everyRecordArrivesOnceInInputOrderAcrossBatches() throws Exception {
        int records = 1_300; // two full batches and part of a third
        try (ParsedAhead ahead = new ParsedAhead(lines(records, null), BOUNDS)) {
            for (int i = 0; i < records; i++) {
                ParsedAhead.Parsed p = ahead.next();
                assertEquals("m-" + i, p.message().messageId());
                assertTrue(p.length() > 0);
            }
            assertNull(ahead.next());
            assertNull(ahead.next(), "the end stays the end");
        }
    }

    @Test
    void aFailureToReadComesAfterEveryRecordBeforeIt() throws Exception {
        IOException broken = new IOException("disk gone");
        try (ParsedAhead ahead = new ParsedAhead(lines(1_000, broken), BOUNDS)) {
            for (int i = 0; i < 1_000; i++) {
                assertEquals("m-" + i, ahead.next().message().messageId());
            }
            assertSame(broken, assertThrows(IOException.class, ahead::next));
        }
    }

    @Test
    void anErrorOfTheReaderReachesTheDecisionsInsteadOfAHang() throws Exception {
        SimulationInput failing =
                new SimulationInput() {
                    final SimulationInput ten = lines(10, null);

                    @Override
                    public RawRecord next() throws IOException {
                        RawRecord r = ten.next();
                        if (r == null) {
                            throw new StackOverflowError("deep");
                        }
                        return r;
                    }

                    @Override
                    public void close() {}
                };
        try (ParsedAhead ahead = new ParsedAhead(failing, BOUNDS)) {
            for (int i = 0; i < 10; i++) {
                assertEquals("m-" + i, ahead.next().message().messageId());
            }
            assertThrows(StackOverflowError.class, ahead::next);
        }
    }

    @Test
    void longLinesAreReadAheadInSmallerBatchesStillInOrder() throws Exception {
        // 40 lines of 400 KB: a batch ends at 1 MiB of values, long before 512 lines.
        String pad = "x".repeat(400_000);
        SimulationInput longLines =
                new SimulationInput() {
                    int i;

                    @Override
                    public RawRecord next() {
                        if (i == 40) {
                            return null;
                        }
                        String line =
                                "{\"messageId\":\"m-"
                                        + i
                                        + "\",\"userId\":1,\"channel\":\"push\","
                                        + "\"category\":\"marketing\",\"timestamp\":1763769600000,"
                                        + "\"payload\":{\"pad\":\""
                                        + pad
                                        + "\"}}";
                        return new RawRecord(
                                null, line.getBytes(StandardCharsets.UTF_8), "in", 0, i++);
                    }

                    @Override
                    public void close() {}
                };
        try (ParsedAhead ahead = new ParsedAhead(longLines, BOUNDS)) {
            for (int i = 0; i < 40; i++) {
                ParsedAhead.Parsed p = ahead.next();
                assertEquals("m-" + i, p.message().messageId());
                assertTrue(p.length() > 400_000);
            }
            assertNull(ahead.next());
        }
    }

    @Test
    void decisionsThatStopEarlyStopTheReader() throws Exception {
        // An endless input: closing must not hang on a reader blocked on a full queue.
        SimulationInput endless = lines(Integer.MAX_VALUE, null);
        ParsedAhead ahead = new ParsedAhead(endless, BOUNDS);
        assertEquals("m-0", ahead.next().message().messageId());
        ahead.close();
    }
}
