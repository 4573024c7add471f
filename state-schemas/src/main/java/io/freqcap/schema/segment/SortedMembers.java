package io.freqcap.schema.segment;

/**
 * Membership in the sorted {@code char[]} of a Roaring array container, searched by interpolation:
 * ids of a segment are spread evenly enough that the first guess lands within a cache line of the
 * answer.
 */
public final class SortedMembers {
    private SortedMembers() {}

    /** Steps walked from the interpolated guess before falling back to a binary search. */
    private static final int WALK = 16;

    /**
     * Whether the sorted, non-empty {@code members} hold {@code key} (0..65535): first guess where
     * an even spread would put it, walk up to {@link #WALK} steps towards it, then binary search
     * what remains (skewed containers cost a binary search, never more).
     */
    static boolean contains(char[] members, int key) {
        int n = members.length;
        int i = (key * n) >>> 16; // key < 2^16, n <= 4096: no overflow
        int v = members[i];
        int lo;
        int hi;
        if (v == key) {
            return true;
        } else if (v < key) {
            int end = Math.min(n, i + 1 + WALK);
            for (int j = i + 1; j < end; j++) {
                int x = members[j];
                if (x >= key) {
                    return x == key;
                }
            }
            lo = end;
            hi = n - 1;
        } else {
            int end = Math.max(-1, i - 1 - WALK);
            for (int j = i - 1; j > end; j--) {
                int x = members[j];
                if (x <= key) {
                    return x == key;
                }
            }
            lo = 0;
            hi = end;
        }
        while (lo <= hi) {
            int m = (lo + hi) >>> 1;
            int x = members[m];
            if (x < key) {
                lo = m + 1;
            } else if (x > key) {
                hi = m - 1;
            } else {
                return true;
            }
        }
        return false;
    }
}
