package io.freqcap.operators.backtest;

import java.util.Arrays;

/**
 * A map from {@code long} keys to objects for userIds: keys below {@link #DENSE_KEYS} (the usual
 * userIds, dense from 0) index an array directly, others go to a hash table (open addressing,
 * linear probing). No boxed keys and no entry objects, so that a lookup among millions of users
 * costs one cache miss, not four (a backtest looks up every message's user; see
 * docs/benchmarks.md). No removal.
 */
public final class LongMap<V> {
    private static final long EMPTY = Long.MIN_VALUE;

    /** Keys below this are array indexes: at most 64 MB of references, grown as keys come. */
    static final int DENSE_KEYS = 1 << 24;

    private Object[] dense = new Object[1 << 10];
    private long[] keys;
    private Object[] values;
    private int size;
    private boolean hasEmptyKey;
    private Object emptyKeyValue;

    public LongMap() {
        this(1 << 10);
    }

    /**
     * @param capacity keys outside the dense range it holds before it grows
     */
    public LongMap(int capacity) {
        int n = Integer.highestOneBit(Math.max(16, capacity) - 1) << 2; // at most half full
        keys = new long[n];
        Arrays.fill(keys, EMPTY);
        values = new Object[n];
    }

    private static int slot(long key, int mask) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }

    @SuppressWarnings("unchecked")
    public V get(long key) {
        if (key >= 0 && key < DENSE_KEYS) {
            return key < dense.length ? (V) dense[(int) key] : null;
        }
        if (key == EMPTY) {
            return hasEmptyKey ? (V) emptyKeyValue : null;
        }
        int mask = keys.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            long k = keys[i];
            if (k == key) {
                return (V) values[i];
            }
            if (k == EMPTY) {
                return null;
            }
        }
    }

    /** Maps {@code key} to {@code value} (not null). */
    public void put(long key, V value) {
        if (key >= 0 && key < DENSE_KEYS) {
            if (key >= dense.length) {
                dense =
                        Arrays.copyOf(
                                dense,
                                (int) Math.min(DENSE_KEYS, Math.max(key + 1, dense.length * 2L)));
            }
            size += dense[(int) key] == null ? 1 : 0;
            dense[(int) key] = value;
            return;
        }
        if (key == EMPTY) {
            size += hasEmptyKey ? 0 : 1;
            hasEmptyKey = true;
            emptyKeyValue = value;
            return;
        }
        int mask = keys.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            long k = keys[i];
            if (k == key) {
                values[i] = value;
                return;
            }
            if (k == EMPTY) {
                keys[i] = key;
                values[i] = value;
                if (++size * 2 > keys.length) {
                    grow();
                }
                return;
            }
        }
    }

    public int size() {
        return size;
    }

    /** What {@link #forEach} hands each entry to. */
    public interface EntryConsumer<V> {
        void accept(long key, V value);
    }

    @SuppressWarnings("unchecked")
    public void forEach(EntryConsumer<V> action) {
        for (int i = 0; i < dense.length; i++) {
            if (dense[i] != null) {
                action.accept(i, (V) dense[i]);
            }
        }
        if (hasEmptyKey) {
            action.accept(EMPTY, (V) emptyKeyValue);
        }
        for (int i = 0; i < keys.length; i++) {
            if (keys[i] != EMPTY) {
                action.accept(keys[i], (V) values[i]);
            }
        }
    }

    private void grow() {
        long[] oldKeys = keys;
        Object[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        Arrays.fill(keys, EMPTY);
        values = new Object[oldKeys.length * 2];
        int mask = keys.length - 1;
        for (int j = 0; j < oldKeys.length; j++) {
            if (oldKeys[j] != EMPTY) {
                int i = slot(oldKeys[j], mask);
                while (keys[i] != EMPTY) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[j];
                values[i] = oldValues[j];
            }
        }
    }
}
