package io.freqcap.operators.backtest;

import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.schema.held.HeldDelivery;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * Each record's final outcome, in input order, from a {@link Backtest}'s decisions (contract.md §6,
 * §8): a held message's outcome is final once the backtest's clock reaches its send time, or a
 * later message takes its place (then it is PREEMPTED); the records after it wait with it, so that
 * they stay in input order. Without {@code preempt} every outcome is final at once and nothing
 * waits.
 *
 * @param <T> what the caller keeps with each record (its input's length, its number)
 */
public final class FinalOutcomes<T> {
    /** Where final outcomes go, in input order. */
    public interface Sink<T> {
        void accept(Decided d, T tag) throws IOException;
    }

    private final boolean preempts;
    private final Sink<T> sink;

    /** Records decided, in input order, whose outcome may still change or that wait behind one. */
    private final ArrayDeque<Pending<T>> pending = new ArrayDeque<>();

    /** The pending held messages still waiting, by user and messageId. */
    private final Map<String, Pending<T>> waiting = new HashMap<>();

    private static final class Pending<T> {
        Decided decided;
        final T tag;

        Pending(Decided decided, T tag) {
            this.decided = decided;
            this.tag = tag;
        }

        /** Whether its outcome may still change at the backtest's clock {@code now}. */
        boolean open(long now) {
            return decided.delivered() && decided.held() && decided.verdict().sendAt() > now;
        }
    }

    /**
     * @param preempts whether the config may take held messages' places (else nothing waits)
     */
    public FinalOutcomes(boolean preempts, Sink<T> sink) {
        this.preempts = preempts;
        this.sink = sink;
    }

    /**
     * Takes the next record's outcome, decided at the backtest's clock {@code now}: the held
     * messages whose place it took become PREEMPTED, and what is final by now goes to the sink.
     */
    public void add(Decided d, T tag, long now) throws IOException {
        if (!preempts) {
            sink.accept(d, tag);
            return;
        }
        for (HeldDelivery h : d.preempted()) {
            Pending<T> p = waiting.remove(key(d.message().userId(), h.message().messageId()));
            if (p == null) {
                throw new IllegalStateException(
                        "preempted " + h.message().messageId() + " was not held");
            }
            p.decided = p.decided.preemptedBy(d.message());
        }
        Pending<T> p = new Pending<>(d, tag);
        pending.add(p);
        if (p.open(now)) {
            waiting.put(key(d.message().userId(), d.message().messageId()), p);
        }
        flush(now);
    }

    /** Every outcome still waiting: the input is at its end, so every one is final. */
    public void finish() throws IOException {
        flush(Long.MAX_VALUE);
    }

    /** Sends the outcomes at the head that are final at {@code now}. */
    private void flush(long now) throws IOException {
        while (!pending.isEmpty() && !pending.peek().open(now)) {
            Pending<T> p = pending.poll();
            if (p.decided.delivered() && p.decided.held()) {
                waiting.remove(key(p.decided.message().userId(), p.decided.message().messageId()));
            }
            sink.accept(p.decided, p.tag);
        }
    }

    private static String key(long user, String messageId) {
        return user + "/" + messageId;
    }
}
