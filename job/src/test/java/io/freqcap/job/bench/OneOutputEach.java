package io.freqcap.job.bench;

import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import java.util.Collection;

/**
 * The benchmark's check that a run decided: every message {@code m-<i>} sent has exactly one output
 * on the delivery or audit topic, or still waits on the held topic, never both. A faster run that
 * loses, repeats or invents a decision fails it.
 */
final class OneOutputEach {
    private static final byte[] FIELD = "\"messageId\"".getBytes(StandardCharsets.UTF_8);

    private final BitSet seen = new BitSet();
    private long outputs;
    private long repeated;
    private long others;

    /** Takes one output record's value. */
    void output(byte[] value) {
        int i = messageIndex(value);
        if (i < 0) {
            others++; // not a message's decision (a control record's INVALID_CONTROL)
        } else if (seen.get(i)) {
            repeated++;
        } else {
            seen.set(i);
            outputs++;
        }
    }

    /** Messages with an output so far. */
    long outputs() {
        return outputs;
    }

    /**
     * What is wrong with the run of {@code messages} messages, given the values on the held topic,
     * or null when every message has its one output.
     */
    String problems(int messages, Collection<byte[]> waiting) {
        BitSet held = new BitSet();
        long both = 0;
        for (byte[] v : waiting) {
            int i = messageIndex(v);
            if (i >= 0) {
                both += seen.get(i) ? 1 : 0;
                held.set(i);
            }
        }
        BitSet accounted = (BitSet) seen.clone();
        accounted.or(held);
        int missing = messages - accounted.get(0, messages).cardinality();
        long unknown =
                accounted.length() > messages
                        ? accounted.get(messages, accounted.length()).cardinality()
                        : 0;
        if (missing == 0 && repeated == 0 && both == 0 && unknown == 0) {
            return null;
        }
        return String.format(
                "%,d messages without an output, %,d outputs repeated, %,d both decided and"
                        + " waiting, %,d outputs of messages never sent",
                missing, repeated, both, unknown);
    }

    /** A summary line. */
    String summary(Collection<byte[]> waiting) {
        return String.format(
                "%,d decided, %,d waiting on the held topic, %,d other audit records",
                outputs, waiting.size(), others);
    }

    /** i of the first {@code "messageId": "m-<i>"} in a JSON value, or -1. */
    static int messageIndex(byte[] v) {
        int at = indexOf(v, FIELD);
        if (at < 0) {
            return -1;
        }
        int p = at + FIELD.length;
        while (p < v.length && v[p] != '"') {
            p++; // past the colon and blanks
        }
        if (p + 3 >= v.length || v[p + 1] != 'm' || v[p + 2] != '-') {
            return -1;
        }
        long n = 0;
        int q = p + 3;
        for (; q < v.length && v[q] >= '0' && v[q] <= '9' && n < Integer.MAX_VALUE; q++) {
            n = n * 10 + (v[q] - '0');
        }
        return q > p + 3 && q < v.length && v[q] == '"' && n < Integer.MAX_VALUE ? (int) n : -1;
    }

    private static int indexOf(byte[] v, byte[] f) {
        outer:
        for (int i = 0; i + f.length <= v.length; i++) {
            for (int j = 0; j < f.length; j++) {
                if (v[i + j] != f[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
