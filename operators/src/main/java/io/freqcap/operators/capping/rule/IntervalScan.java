package io.freqcap.operators.capping.rule;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.Scope;
import java.util.Arrays;
import java.util.List;

/**
 * The rule of contract.md §6 over timestamps in an array, checking every interval start: what a
 * message earlier than the user's latest counted one needs (see {@link CappingRule}). Plain Java.
 *
 * <p>For a limit (window w, max L) and the counted timestamps A in its scope, a message at t is
 * allowed only if every half-open interval [s, s + w) containing t holds at most L entries of A ∪
 * {t}. The intervals containing t start in (t − w, t]; the fullest of them starts at t itself or at
 * an entry of A in that range (sliding a start right past empty space never loses an entry), so
 * checking those starts is exact and costs O(|A|) with two pointers.
 */
public final class IntervalScan {
    private IntervalScan() {}

    /**
     * The most entries of {@code ts[0..n)} (ascending) that any interval [s, s + w) with s in (t −
     * w, t] holds. Differences, not sums, are compared so that no timestamp can overflow.
     */
    static int fullestInterval(long[] ts, int n, long t, long w) {
        // The interval starting at t itself.
        int lo = lowerBound(ts, n, t);
        int j = lo;
        while (j < n && ts[j] - t < w) {
            j++;
        }
        int best = j - lo;
        // Intervals starting at an entry b with t - w < b <= t.
        int i = lowerBound(ts, n, t - w + 1);
        j = i;
        for (; i < n && ts[i] <= t; i++) {
            if (i > 0 && ts[i - 1] == ts[i] && ts[i - 1] > t - w) {
                continue; // same start as the previous entry, already counted
            }
            if (j < i) {
                j = i;
            }
            while (j < n && ts[j] - ts[i] < w) {
                j++;
            }
            best = Math.max(best, j - i);
        }
        return best;
    }

    private static int lowerBound(long[] ts, int n, long key) {
        int lo = 0;
        int hi = n;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (ts[mid] < key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The limits of one scope and the counted timestamps in it, ascending. */
    record Scoped(Scope scope, List<Limit> limits, long[] ts) {}

    /**
     * The earliest time at or after t at which the same message would pass every limit if nothing
     * else were counted, or {@code null} when a limit of 0 means never.
     *
     * <p>Between candidate times the fullest interval containing the message can only grow or stay:
     * it shrinks only when an entry b leaves every interval containing the time, which happens at b
     * + w. So the answer is t or one of those b + w, and the first candidate that passes is it.
     */
    static Long retryAfter(long t, List<Scoped> scopes) {
        for (Scoped s : scopes) {
            for (Limit l : s.limits()) {
                if (l.max() == 0) {
                    return null;
                }
            }
        }
        long[] cand = candidates(t, scopes);
        for (int c = 0; c < cand.length; ) {
            long at = cand[c];
            long notBefore = notBefore(at, scopes);
            if (notBefore == at) {
                return at;
            }
            // Every time before notBefore fails a limit: skip the candidates there (a user with
            // thousands of held messages ahead would otherwise try each of them).
            c = Math.max(c + 1, lowerBound(cand, cand.length, notBefore));
        }
        // Unreachable while every max >= 1: past the last entry plus the longest window,
        // every interval holds only the message itself.
        return null;
    }

    /**
     * {@code at} if a message then passes every limit; else a time after it before which none does
     * (each limit failing at {@code at} gives one, the latest is taken).
     */
    private static long notBefore(long at, List<Scoped> scopes) {
        long bound = at;
        for (Scoped s : scopes) {
            for (Limit l : s.limits()) {
                long w = l.windowMillis();
                if (fullestInterval(s.ts(), s.ts().length, at, w) >= l.max()) {
                    bound = Math.max(bound, firstFree(s.ts(), at, w, l.max()));
                }
            }
        }
        return bound;
    }

    /**
     * The earliest time at or after {@code from} at which one limit (window w, max L) passes, for
     * timestamps {@code ts} (ascending). L entries e_j..e_j+L-1 spanning less than w fill every
     * interval that holds them, so they block exactly the times in (e_j+L-1 − w, e_j + w); those
     * ranges start and end in order of j, so one sweep finds the first time none blocks.
     */
    static long firstFree(long[] ts, long from, long w, int max) {
        long cur = from;
        int n = ts.length;
        // Groups whose range ends after cur: e_j + w > cur.
        for (int j = lowerBound(ts, n, cur - w + 1); j + max - 1 < n; j++) {
            long last = ts[j + max - 1];
            if (last - ts[j] >= w) {
                continue; // these L span a whole window: no interval holds them all
            }
            if (last - w >= cur) {
                break; // this range, and every later one, starts after cur
            }
            cur = Math.max(cur, ts[j] + w);
        }
        return cur;
    }

    /** Whether a limit of 0 blocks every time. */
    static boolean blocks(List<Scoped> scopes) {
        for (Scoped s : scopes) {
            for (Limit l : s.limits()) {
                if (l.max() == 0) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The times b + w after t (entries b, windows w), ascending, each once. Each limit's are in
     * order already (its scope's entries are): merged, not sorted.
     */
    static long[] candidates(long t, List<Scoped> scopes) {
        long[] merged = new long[0];
        for (Scoped s : scopes) {
            for (Limit l : s.limits()) {
                long[] one = new long[s.ts().length];
                int n = addCandidates(one, s.ts(), t, l.windowMillis());
                merged = mergeDistinct(merged, one, n);
            }
        }
        return merged;
    }

    /** The ascending, distinct union of {@code a} and {@code b[0..nb)} (both ascending). */
    private static long[] mergeDistinct(long[] a, long[] b, int nb) {
        long[] out = new long[a.length + nb];
        int i = 0;
        int j = 0;
        int n = 0;
        while (i < a.length || j < nb) {
            long next = j == nb || (i < a.length && a[i] <= b[j]) ? a[i++] : b[j++];
            if (n == 0 || out[n - 1] != next) {
                out[n++] = next;
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    /** Whether a message at {@code at} passes every limit of {@code scopes}. */
    static boolean passes(long at, List<Scoped> scopes) {
        for (Scoped s : scopes) {
            if (!passes(at, s.limits(), s.ts(), s.ts().length)) {
                return false;
            }
        }
        return true;
    }

    private static int addCandidates(long[] cand, long[] ts, long t, long w) {
        int n = 0;
        for (int i = 0; i < ts.length; i++) {
            if (ts[i] <= Long.MAX_VALUE - w && ts[i] + w > t) {
                cand[n++] = ts[i] + w;
            }
        }
        return n;
    }

    private static boolean passes(long at, List<Limit> limits, long[] ts, int n) {
        for (Limit l : limits) {
            if (fullestInterval(ts, n, at, l.windowMillis()) >= l.max()) {
                return false;
            }
        }
        return true;
    }
}
