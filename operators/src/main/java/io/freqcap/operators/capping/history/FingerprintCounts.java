package io.freqcap.operators.capping.history;

/**
 * A multiset of 56-bit fingerprints (never negative): open addressing with linear probing, deletion
 * by backward shift, so that lookups stay short however many entries came and went. Two primitive
 * arrays, no object per entry.
 */
public final class FingerprintCounts {
    private static final long FREE = -1;
    private static final long MIX = 0x9E3779B97F4A7C15L;

    private long[] keys;
    private int[] counts;
    private int size;
    private int shift;

    FingerprintCounts() {
        allocate(16);
    }

    private void allocate(int capacity) {
        keys = new long[capacity];
        counts = new int[capacity];
        java.util.Arrays.fill(keys, FREE);
        shift = 64 - Integer.numberOfTrailingZeros(capacity);
        size = 0;
    }

    private int slot(long key) {
        return (int) ((key * MIX) >>> shift);
    }

    boolean contains(long key) {
        int mask = keys.length - 1;
        for (int i = slot(key); ; i = (i + 1) & mask) {
            long k = keys[i];
            if (k == key) {
                return true;
            }
            if (k == FREE) {
                return false;
            }
        }
    }

    void add(long key) {
        if (2 * (size + 1) > keys.length) {
            long[] oldKeys = keys;
            int[] oldCounts = counts;
            allocate(keys.length * 2);
            for (int i = 0; i < oldKeys.length; i++) {
                if (oldKeys[i] != FREE) {
                    put(oldKeys[i], oldCounts[i]);
                }
            }
        }
        put(key, 1);
    }

    private void put(long key, int count) {
        int mask = keys.length - 1;
        for (int i = slot(key); ; i = (i + 1) & mask) {
            if (keys[i] == key) {
                counts[i] += count;
                return;
            }
            if (keys[i] == FREE) {
                keys[i] = key;
                counts[i] = count;
                size++;
                return;
            }
        }
    }

    /** Removes one occurrence of the key, if any. */
    void remove(long key) {
        int mask = keys.length - 1;
        int i = slot(key);
        while (keys[i] != key) {
            if (keys[i] == FREE) {
                return;
            }
            i = (i + 1) & mask;
        }
        if (--counts[i] > 0) {
            return;
        }
        // Backward shift: move later keys of the probe run into the hole where their home allows.
        int hole = i;
        for (int j = (hole + 1) & mask; keys[j] != FREE; j = (j + 1) & mask) {
            int home = slot(keys[j]);
            // j's key may move to the hole if its home is not cyclically in (hole, j].
            boolean homeBetween =
                    hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
            if (!homeBetween) {
                keys[hole] = keys[j];
                counts[hole] = counts[j];
                hole = j;
            }
        }
        keys[hole] = FREE;
        counts[hole] = 0;
        size--;
    }

    int size() {
        return size;
    }
}
