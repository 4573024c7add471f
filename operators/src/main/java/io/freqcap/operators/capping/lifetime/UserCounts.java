package io.freqcap.operators.capping.lifetime;

import io.freqcap.schema.common.VarInts;
import io.freqcap.schema.lifetime.LifetimeCount;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * One user's lifetime counts of every campaign, reused from message to message: read from keyed
 * state or from a cache slot, changed, and written back to either. In a slot each campaign is its
 * UTF-8 bytes behind their length (times two, plus one when keyed state does not have the count
 * yet), then its count and its latest send time, as varints (the latest in zigzag form: the years
 * before 1970 are negative).
 */
final class UserCounts {
    private String[] campaigns = new String[8];
    private long[] counts = new long[8];
    private long[] latest = new long[8];
    private boolean[] changed = new boolean[8];

    /** Where each count begins in the slot it was last {@link #read} from. */
    private int[] starts = new int[8];

    private int size;

    private final DataInputDeserializer in = new DataInputDeserializer();
    private final DataOutputSerializer out = new DataOutputSerializer(128);

    /** The count of {@code campaign}, or null for none. */
    LifetimeCount get(String campaign) {
        int i = indexOf(campaign);
        return i < 0 ? null : new LifetimeCount(counts[i], latest[i]);
    }

    /** Sets the count of {@code campaign}: changed since keyed state last had it. */
    void set(String campaign, LifetimeCount c) {
        set(campaign, c, true);
    }

    private void set(String campaign, LifetimeCount c, boolean changing) {
        int i = indexOf(campaign);
        if (i < 0) {
            if (size == campaigns.length) {
                campaigns = Arrays.copyOf(campaigns, size * 2);
                counts = Arrays.copyOf(counts, size * 2);
                latest = Arrays.copyOf(latest, size * 2);
                changed = Arrays.copyOf(changed, size * 2);
                starts = Arrays.copyOf(starts, size * 2);
            }
            i = size++;
            campaigns[i] = campaign;
        }
        counts[i] = c.count();
        latest[i] = c.latest();
        changed[i] = changing;
    }

    private int indexOf(String campaign) {
        for (int i = 0; i < size; i++) {
            if (campaigns[i].equals(campaign)) {
                return i;
            }
        }
        return -1;
    }

    /** The user has no counts. */
    UserCounts empty() {
        Arrays.fill(campaigns, 0, size, null);
        size = 0;
        return this;
    }

    /**
     * The counts keyed state holds for the current key, or null once they take more than {@code
     * most} bytes in a slot (the rest is not read).
     */
    UserCounts readAtMost(MapState<String, LifetimeCount> state, int most) throws Exception {
        empty();
        int bytes = 0;
        for (Map.Entry<String, LifetimeCount> e : state.entries()) {
            LifetimeCount c = e.getValue();
            int utf8 = utf8Length(e.getKey());
            bytes +=
                    varLength(utf8 * 2L + 1)
                            + utf8
                            + varLength(c.count())
                            + varLength((c.latest() << 1) ^ (c.latest() >> 63));
            if (bytes > most) {
                return null;
            }
            set(e.getKey(), c, false);
        }
        return this;
    }

    private static int varLength(long v) {
        return v == 0 ? 1 : (63 - Long.numberOfLeadingZeros(v)) / 7 + 1;
    }

    /** Bytes of {@code s} in UTF-8 (a surrogate pair: 4). */
    private static int utf8Length(String s) {
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            n += c < 0x80 ? 1 : c < 0x800 || Character.isSurrogate(c) ? 2 : 3;
        }
        return n;
    }

    /**
     * Puts the counts that changed since keyed state last had them into keyed state, for the
     * current key, and marks them unchanged.
     */
    void writeChanged(MapState<String, LifetimeCount> state) throws Exception {
        for (int i = 0; i < size; i++) {
            if (changed[i]) {
                state.put(campaigns[i], new LifetimeCount(counts[i], latest[i]));
                changed[i] = false;
            }
        }
    }

    /** The counts {@code length} bytes of a slot hold. */
    UserCounts read(byte[] bytes, int offset, int length) throws IOException {
        empty();
        in.setBuffer(bytes, offset, length);
        while (in.available() > 0) {
            int start = offset + length - in.available();
            long header = VarInts.readVarLong(in);
            byte[] utf8 = new byte[(int) (header >>> 1)];
            in.readFully(utf8);
            long count = VarInts.readVarLong(in);
            long z = VarInts.readVarLong(in);
            set(
                    new String(utf8, StandardCharsets.UTF_8),
                    new LifetimeCount(count, (z >>> 1) ^ -(z & 1)),
                    (header & 1) != 0);
            starts[size - 1] = start; // a slot holds each campaign once: the one just added
        }
        return this;
    }

    /**
     * Puts the counts of a slot's bytes that changed since keyed state last had them into keyed
     * state, for the current key, and marks them unchanged in the bytes themselves (a flag bit of
     * each count's first byte: the slot's length stays).
     */
    void writeChanged(byte[] bytes, int offset, int length, MapState<String, LifetimeCount> state)
            throws Exception {
        read(bytes, offset, length);
        for (int i = 0; i < size; i++) {
            if (changed[i]) {
                bytes[starts[i]] &= ~1;
            }
        }
        writeChanged(state);
    }

    /** The counts as a slot holds them: {@link #bytes()}, {@link #length()}. */
    UserCounts serialize() throws IOException {
        out.clear();
        for (int i = 0; i < size; i++) {
            byte[] utf8 = campaigns[i].getBytes(StandardCharsets.UTF_8);
            VarInts.writeVarLong(out, ((long) utf8.length << 1) | (changed[i] ? 1 : 0));
            out.write(utf8);
            VarInts.writeVarLong(out, counts[i]);
            VarInts.writeVarLong(out, (latest[i] << 1) ^ (latest[i] >> 63));
        }
        return this;
    }

    byte[] bytes() {
        return out.getSharedBuffer();
    }

    int length() {
        return out.length();
    }
}
