package io.freqcap.job.tools.simulate;

import io.freqcap.operators.capping.Bounds;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.RawRecord;
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The input read and parsed on a thread of its own, ahead of the decisions and in input order: on
 * two cores, reading and parsing (about half of a record's cost) run beside deciding and writing.
 * The decisions stay on one thread in input order, so the output is what a single thread writes. A
 * failure to read reaches the deciding thread as it was thrown, once the records before it are
 * decided.
 */
final class ParsedAhead implements AutoCloseable {
    /** One input record parsed, with its full length as read. */
    record Parsed(InboundMessage message, long length) {}

    /** A batch ends at this many records or once its values hold {@link #BATCH_BYTES}. */
    private static final int BATCH = 512;

    private static final long BATCH_BYTES = 1 << 20;

    private static final Object END = new Object();

    // Batches of parsed records (Parsed[]), then END or what the reader threw. At most 16
    // batches of at most 1 MiB and one record (a record keeps at most --max-record-bytes of its
    // value): however long the input's lines, what is read ahead stays within a few tens of MiB.
    private final BlockingQueue<Object> batches = new ArrayBlockingQueue<>(16);
    private final Thread reader;
    private Parsed[] batch = new Parsed[0];
    private int next;
    private boolean ended;

    ParsedAhead(SimulationInput input, Bounds bounds) {
        reader = new Thread(() -> read(input, bounds), "freqcap-simulate-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /** The next record, or null at the input's end. */
    Parsed next() throws IOException {
        while (next == batch.length) {
            if (ended) {
                return null;
            }
            Object o = take();
            if (o == END) {
                ended = true;
                return null;
            }
            if (o instanceof Throwable failure) {
                ended = true;
                throw rethrow(failure);
            }
            batch = (Parsed[]) o;
            next = 0;
        }
        return batch[next++];
    }

    private void read(SimulationInput input, Bounds bounds) {
        Parsed[] out = new Parsed[BATCH];
        int n = 0;
        long bytes = 0;
        Object last = END;
        try {
            RawRecord raw;
            while ((raw = input.next()) != null) {
                out[n++] = parse(input, raw, bounds);
                bytes += raw.value() == null ? 0 : raw.value().length;
                if (n == BATCH || bytes >= BATCH_BYTES) {
                    batches.put(n == BATCH ? out : Arrays.copyOf(out, n));
                    out = new Parsed[BATCH];
                    n = 0;
                    bytes = 0;
                }
            }
        } catch (InterruptedException closed) {
            Thread.currentThread().interrupt();
            return;
        } catch (Throwable failure) {
            last = failure; // after the records read before it
        }
        try {
            if (n > 0) {
                batches.put(Arrays.copyOf(out, n));
            }
            batches.put(last);
        } catch (InterruptedException closed) {
            Thread.currentThread().interrupt();
        }
    }

    /** As the job parses a record; the job's clock is the wall clock, so is simulate's. */
    private static Parsed parse(SimulationInput input, RawRecord raw, Bounds bounds) {
        long length = input.lengthOf(raw);
        InboundMessage in =
                raw.value() != null && length > raw.value().length
                        ? InboundMessage.tooLarge(raw, length, bounds.maxRecordBytes())
                        : InboundMessage.of(
                                raw,
                                bounds.maxRecordBytes(),
                                bounds.maxFuture(),
                                System.currentTimeMillis());
        return new Parsed(in, length);
    }

    /**
     * The next batch, END or failure; a reader that died without handing over either (an Error
     * thrown while handing over) ends the wait with an IOException instead of a hang.
     */
    private Object take() throws IOException {
        try {
            while (true) {
                Object o = batches.poll(1, TimeUnit.SECONDS);
                if (o != null) {
                    return o;
                }
                if (!reader.isAlive() && batches.isEmpty()) {
                    throw new IOException("the input's reader stopped without finishing");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while reading the input", e);
        }
    }

    private static IOException rethrow(Throwable failure) {
        if (failure instanceof IOException e) {
            return e;
        }
        if (failure instanceof RuntimeException e) {
            throw e;
        }
        if (failure instanceof Error e) {
            throw e;
        }
        return new IOException(failure);
    }

    /** Stops the reader (when the decisions stopped early) and waits for it to let go the input. */
    @Override
    public void close() {
        reader.interrupt();
        boolean interrupted = false;
        while (reader.isAlive()) {
            try {
                reader.join();
            } catch (InterruptedException e) {
                interrupted = true; // the input is closed after this: wait for the reader still
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
