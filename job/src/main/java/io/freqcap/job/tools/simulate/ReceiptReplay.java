package io.freqcap.job.tools.simulate;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.receipt.DeliveryReceipt;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.Consumer;

/**
 * {@code freqcap-simulate --receipts} (contract.md §8): DeliveryReceipts replayed among the
 * messages. A receipt stamped T is applied just before the first message whose timestamp is greater
 * than T, so after every message stamped T or earlier that comes before it; receipts due at one
 * message are applied in file order.
 */
final class ReceiptReplay {
    private record Line(int index, DeliveryReceipt receipt) {}

    private final PriorityQueue<Line> pending =
            new PriorityQueue<>(
                    Comparator.comparingLong((Line l) -> l.receipt().timestamp())
                            .thenComparingInt(Line::index));

    private ReceiptReplay(List<DeliveryReceipt> receipts) {
        for (int i = 0; i < receipts.size(); i++) {
            pending.add(new Line(i, receipts.get(i)));
        }
    }

    /** No receipts. */
    static ReceiptReplay none() {
        return new ReceiptReplay(List.of());
    }

    /**
     * Reads a JSONL file of DeliveryReceipts, each with a {@code timestamp}; an invalid line, or
     * one without a timestamp, names itself.
     */
    static ReceiptReplay read(Path file) throws InvalidOptionException {
        List<String> lines = SimulationInput.lines(file, "receipts");
        List<DeliveryReceipt> receipts = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank()) {
                continue;
            }
            String where = "--receipts: " + file + " line " + (i + 1) + ": ";
            DeliveryReceipt r;
            try {
                r = DeliveryReceipt.parse(line.getBytes(StandardCharsets.UTF_8));
            } catch (MalformedRecordException e) {
                throw new InvalidOptionException(where + e.getMessage());
            }
            if (r.timestamp() == null) {
                throw new InvalidOptionException(
                        where
                                + "timestamp: required here (a replay has no clock to stamp it"
                                + " with)");
            }
            receipts.add(r);
        }
        return new ReceiptReplay(receipts);
    }

    /**
     * Applies, in file order, every receipt stamped before {@code timestamp}: the next message's.
     */
    void before(long timestamp, Consumer<DeliveryReceipt> apply) {
        List<Line> due = null;
        while (!pending.isEmpty() && pending.peek().receipt().timestamp() < timestamp) {
            if (due == null) {
                due = new ArrayList<>();
            }
            due.add(pending.poll());
        }
        if (due == null) {
            return;
        }
        due.sort(Comparator.comparingInt(Line::index));
        for (Line l : due) {
            apply.accept(l.receipt());
        }
    }
}
