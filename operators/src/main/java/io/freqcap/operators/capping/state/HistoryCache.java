package io.freqcap.operators.capping.state;

/**
 * A bounded cache of serialized user histories in front of the capping operator's keyed state: a
 * RocksDB point read is a dozen cache-missing steps through memtables, bloom filters, index and
 * data blocks, a hit here two memory reads.
 *
 * <p>An entry is clean (equal to what keyed state holds for its user) or dirty (newer: written here
 * instead of to keyed state). {@link #flushDirty} hands the dirty ones to keyed state, sorted in
 * RocksDB's key order, so that memtable inserts land next to each other (a random insert is a dozen
 * cache misses down a large skiplist); the capping function calls it before every snapshot and
 * every scan of keyed state, so checkpoints, restores and rescaling never need the cache (a new
 * operator instance starts with an empty one). A dirty entry is never replaced by another user's
 * history: the other user's goes to keyed state directly. Whoever changes keyed state another way
 * (the cleanup sweep) must flush, then {@link #clear}.
 *
 * <p>Direct-mapped: a user has exactly one slot, chosen by a multiplicative hash of the userId, and
 * a newer user in the slot replaces the older one; no lists, no bookkeeping on a hit. Each slot
 * holds up to {@link #MAX_BYTES} bytes of the state serializer's output inline, in arrays of
 * primitives allocated a chunk at a time as slots are first written: no object per entry, so the
 * garbage collector has nothing to trace or copy. A longer history (a user with more than about ten
 * messages in the longest window, fewer when messages carry campaigns and zones) is not cached.
 * Memory: {@link #BYTES_PER_SLOT} bytes per slot written; slots hold 127 bytes so that counted
 * entries with a campaign and a zone offset still fit (docs/benchmarks.md has the measurements).
 *
 * <p>Lifetime counts use a cache of their own of this kind ({@code capping.lifetime}): a user's
 * counts of every campaign, serialized the same way into one slot.
 */
public final class HistoryCache {
    /** The most slots a cache may have (8.5 GB of arrays when all are written). */
    public static final int MAX_SLOTS = 1 << 26;

    /** The longest serialized history a slot holds. */
    public static final int MAX_BYTES = 127;

    private static final int SLOT_BYTES = MAX_BYTES + 1; // a length byte, then the bytes

    /** Heap a written slot takes: its bytes and its userId. */
    public static final int BYTES_PER_SLOT = SLOT_BYTES + Long.BYTES;

    /** The share of the JVM's heap one task's cache may take when full. */
    static final int HEAP_SHARE = 8;

    /**
     * The slots to use of {@code requested}: as many as fit in an eighth of the heap when all are
     * written (a TaskManager with a few slots then keeps most of its heap for everything else),
     * rounded down to a power of two. A cache sized for a big heap would otherwise fail a small
     * TaskManager with OutOfMemoryError once users spread over its slots, and again after every
     * restart.
     */
    public static int slotsWithin(int requested, long maxHeapBytes) {
        long fit = maxHeapBytes / HEAP_SHARE / BYTES_PER_SLOT;
        if (requested == 0 || roundedUp(requested) <= fit) {
            return requested;
        }
        return fit < 2 ? 0 : (int) Long.highestOneBit(fit);
    }

    private static int roundedUp(int slots) {
        return Math.max(2, Integer.highestOneBit(Math.max(1, slots - 1)) << 1);
    }

    private static final int LENGTH = 0x7F; // of the length byte; 0: an empty slot
    private static final int DIRTY = 0x80; // of the length byte: newer than keyed state
    private static final int CHUNK_SLOTS_LOG2 = 14; // 16,384 slots, 2 MB of bytes per chunk
    private static final long MIX = 0x9E3779B97F4A7C15L; // 2^64 / golden ratio

    private final long[][] users;
    private final byte[][] bytes;
    private final int shift;
    private final int slots;

    /** Users whose slot turned dirty since the last flush (some may be clean or gone again). */
    private long[] dirtyUsers = new long[64];

    private int dirtyCount;

    /**
     * @param slots at least this many slots (rounded up to a power of two); 0 caches nothing
     */
    public HistoryCache(int slots) {
        if (slots < 0 || slots > MAX_SLOTS) {
            throw new IllegalArgumentException("slots must be 0.." + MAX_SLOTS + ", got " + slots);
        }
        int n = slots == 0 ? 0 : roundedUp(slots);
        this.slots = n;
        int chunks = n == 0 ? 0 : Math.max(1, n >>> CHUNK_SLOTS_LOG2);
        users = new long[chunks][];
        bytes = new byte[chunks][];
        shift = n == 0 ? 0 : 64 - Integer.numberOfTrailingZeros(n);
    }

    public int slots() {
        return slots;
    }

    /**
     * Copies the user's cached serialized history into {@code out} (at least {@link #MAX_BYTES}
     * long) and returns its length, or returns 0 when the slot holds another user or nothing.
     */
    public int get(long user, byte[] out) {
        if (slots == 0) {
            return 0;
        }
        int s = slot(user);
        int c = s >>> CHUNK_SLOTS_LOG2;
        byte[] b = bytes[c];
        if (b == null) {
            return 0;
        }
        int i = s & ((1 << CHUNK_SLOTS_LOG2) - 1);
        int at = i * SLOT_BYTES;
        int length = b[at] & LENGTH;
        if (length == 0 || users[c][i] != user) {
            return 0;
        }
        System.arraycopy(b, at + 1, out, 0, length);
        return length;
    }

    /**
     * Caches {@code length} bytes of {@code serialized} as the user's history, as keyed state holds
     * it. Never replaces another user's dirty history; a history longer than {@link #MAX_BYTES}
     * empties the user's slot instead.
     */
    public void put(long user, byte[] serialized, int length) {
        store(user, serialized, length, false);
    }

    /**
     * Caches the user's history as newer than keyed state (written there by {@link #flushDirty}).
     *
     * @return false if it could not be cached (too long, or the slot holds another user's dirty
     *     history): the caller must write it to keyed state itself
     */
    public boolean putDirty(long user, byte[] serialized, int length) {
        return store(user, serialized, length, true);
    }

    private boolean store(long user, byte[] serialized, int length, boolean dirty) {
        if (slots == 0) {
            return false;
        }
        int s = slot(user);
        int c = s >>> CHUNK_SLOTS_LOG2;
        int i = s & ((1 << CHUNK_SLOTS_LOG2) - 1);
        if (bytes[c] == null) {
            if (length > MAX_BYTES) {
                return false;
            }
            int chunkSlots = Math.min(slots, 1 << CHUNK_SLOTS_LOG2);
            users[c] = new long[chunkSlots];
            bytes[c] = new byte[chunkSlots * SLOT_BYTES];
        }
        int at = i * SLOT_BYTES;
        boolean mine = users[c][i] == user;
        if ((bytes[c][at] & DIRTY) != 0 && !mine) {
            return false; // another user's newer history: it stays until the next flush
        }
        if (length > MAX_BYTES || length <= 0) {
            if (mine) {
                bytes[c][at] = 0; // the user's older history must not be read again
            }
            return false;
        }
        if (dirty && !(mine && (bytes[c][at] & DIRTY) != 0)) {
            if (dirtyCount == dirtyUsers.length) {
                dirtyUsers = java.util.Arrays.copyOf(dirtyUsers, dirtyCount * 2);
            }
            dirtyUsers[dirtyCount++] = user;
        }
        users[c][i] = user;
        bytes[c][at] = (byte) (dirty ? length | DIRTY : length);
        System.arraycopy(serialized, 0, bytes[c], at + 1, length);
        return true;
    }

    /** Empties the user's slot, if it holds the user: keyed state holds the user's history now. */
    public void forget(long user) {
        if (slots == 0) {
            return;
        }
        int s = slot(user);
        int c = s >>> CHUNK_SLOTS_LOG2;
        int i = s & ((1 << CHUNK_SLOTS_LOG2) - 1);
        if (bytes[c] != null && users[c][i] == user) {
            bytes[c][i * SLOT_BYTES] = 0;
        }
    }

    /** Receives a dirty history on its way to keyed state. */
    public interface Writer {
        void write(long user, byte[] bytes, int offset, int length) throws Exception;
    }

    /**
     * Hands every dirty history to {@code writer}, ordered by key group, then by userId (the order
     * of RocksDB's keys, so that its memtable inserts land next to each other), and marks them
     * clean.
     *
     * @param keyGroupOf the key group of a userId
     * @return how many were written
     */
    public int flushDirty(java.util.function.LongToIntFunction keyGroupOf, Writer writer)
            throws Exception {
        // The users that turned dirty, not a scan of every slot: a scan read a cache line per slot
        // at every checkpoint.
        int n = dirtyCount;
        long[] u = java.util.Arrays.copyOf(dirtyUsers, n);
        long max = 0;
        for (int k = 0; k < n; k++) {
            max = Math.max(max, u[k]);
        }
        if (max < 1L << 47) {
            // key group (< 2^16) and userId in one long: a primitive sort
            for (int k = 0; k < n; k++) {
                u[k] |= (long) keyGroupOf.applyAsInt(u[k]) << 47;
            }
            java.util.Arrays.sort(u);
            for (int k = 0; k < n; k++) {
                u[k] &= (1L << 47) - 1;
            }
        } else {
            Long[] boxed = new Long[n];
            for (int k = 0; k < n; k++) {
                boxed[k] = u[k];
            }
            java.util.Arrays.sort(
                    boxed,
                    java.util.Comparator.<Long>comparingInt(keyGroupOf::applyAsInt)
                            .thenComparingLong(x -> x));
            for (int k = 0; k < n; k++) {
                u[k] = boxed[k];
            }
        }
        int written = 0;
        for (int k = 0; k < n; k++) {
            long user = u[k];
            int s = slot(user);
            int c = s >>> CHUNK_SLOTS_LOG2;
            int i = s & ((1 << CHUNK_SLOTS_LOG2) - 1);
            int at = i * SLOT_BYTES;
            byte[] b = bytes[c];
            if ((b[at] & DIRTY) == 0 || users[c][i] != user) {
                continue; // written through since, or listed twice
            }
            writer.write(user, b, at + 1, b[at] & LENGTH);
            b[at] = (byte) (b[at] & LENGTH);
            written++;
        }
        dirtyCount = 0;
        return written;
    }

    /**
     * Gives back the slots' memory (the task closed): a metric reporter that keeps a closed task's
     * gauges must not keep a cache of hundreds of megabytes alive with them.
     */
    public void release() {
        java.util.Arrays.fill(users, null);
        java.util.Arrays.fill(bytes, null);
        dirtyCount = 0;
    }

    /** Whether some slot may be dirty: a {@link #flushDirty} would write something. */
    public boolean anyDirty() {
        return dirtyCount > 0;
    }

    /** Empties every slot; dirty histories are lost, so {@link #flushDirty} first. */
    public void clear() {
        dirtyCount = 0;
        for (byte[] b : bytes) {
            if (b != null) {
                for (int at = 0; at < b.length; at += SLOT_BYTES) {
                    b[at] = 0;
                }
            }
        }
    }

    private int slot(long user) {
        return (int) ((user * MIX) >>> shift);
    }
}
