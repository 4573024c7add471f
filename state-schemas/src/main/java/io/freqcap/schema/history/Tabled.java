package io.freqcap.schema.history;

import java.util.Arrays;

/**
 * A per-entry attribute of a history (category, campaign) as a table of the distinct values its
 * entries use, in order of first use, and per entry an index: 0 for the absent value (the default
 * category, no campaign), t + 1 for {@code table[t]}. Both null when every entry's is absent. The
 * arrays are shared, never changed: every operation returns new ones where it changes anything.
 */
public record Tabled(String[] table, int[] index) {
    static final Tabled NONE = new Tabled(null, null);

    /**
     * From per-entry values; {@code absent} (and null) become index 0.
     *
     * @param values per entry, or null for absent everywhere
     */
    static Tabled of(String[] values, String absent) {
        if (values == null) {
            return NONE;
        }
        String[] table = new String[values.length];
        int used = 0;
        int[] index = null;
        for (int i = 0; i < values.length; i++) {
            String v = values[i];
            if (v == null || v.equals(absent)) {
                continue;
            }
            int at = indexOf(table, used, v);
            if (at < 0) {
                table[used] = v;
                at = used++;
            }
            if (index == null) {
                index = new int[values.length];
            }
            index[i] = at + 1;
        }
        return index == null ? NONE : new Tabled(Arrays.copyOf(table, used), index);
    }

    /** Per-entry values (null for absent), or null when every entry's is absent. */
    static String[] values(String[] table, int[] index) {
        if (index == null) {
            return null;
        }
        String[] out = new String[index.length];
        for (int i = 0; i < index.length; i++) {
            out[i] = index[i] == 0 ? null : table[index[i] - 1];
        }
        return out;
    }

    /**
     * Whether {@code table} and {@code index} are as this class keeps them: distinct values, none
     * {@code absent}, each used, in order of first use, indexes in range.
     */
    static boolean canonical(String[] table, int[] index, String absent) {
        if (index == null) {
            return true;
        }
        int size = table == null ? 0 : table.length;
        int next = 1;
        for (int x : index) {
            if (x < 0 || x > next || x > size) {
                return false; // out of range, or first used before a value listed earlier
            }
            if (x == next) {
                next++;
            }
        }
        if (next != size + 1) {
            return false; // a value no entry uses
        }
        for (int i = 0; i < size; i++) {
            if (table[i] == null || table[i].equals(absent) || indexOf(table, i, table[i]) >= 0) {
                return false;
            }
        }
        return true;
    }

    /** With {@code v} (null: absent) inserted for a new entry at {@code pos} of {@code n}. */
    static Tabled with(String[] table, int[] index, int n, int pos, String v) {
        if (v == null) {
            return index == null ? NONE : new Tabled(table, insert(index, pos, 0));
        }
        int at = table == null ? -1 : indexOf(table, table.length, v);
        String[] t = table;
        if (at < 0) {
            t = table == null ? new String[1] : Arrays.copyOf(table, table.length + 1);
            at = t.length - 1;
            t[at] = v;
        }
        Tabled next = new Tabled(t, insert(index == null ? new int[n] : index, pos, at + 1));
        // Inserted before the latest entry, it may come first to a value: keep first-use order.
        return pos < n ? next.reordered() : next;
    }

    /** Entries [from, to): values they no longer use go. */
    static Tabled slice(String[] table, int[] index, int from, int to) {
        return index == null
                ? NONE
                : new Tabled(table, Arrays.copyOfRange(index, from, to)).reordered();
    }

    /** In order of first use, without values no entry uses. */
    Tabled reordered() {
        int[] remap = new int[table.length + 1];
        int used = 0;
        boolean identity = true;
        for (int x : index) {
            if (x != 0 && remap[x] == 0) {
                remap[x] = ++used;
                identity &= used == x;
            }
        }
        if (used == 0) {
            return NONE;
        }
        if (identity && used == table.length) {
            return this;
        }
        String[] t = new String[used];
        for (int old = 1; old <= table.length; old++) {
            if (remap[old] != 0) {
                t[remap[old] - 1] = table[old - 1];
            }
        }
        int[] out = new int[index.length];
        for (int i = 0; i < index.length; i++) {
            out[i] = remap[index[i]];
        }
        return new Tabled(t, out);
    }

    /** The position of {@code v} among the first {@code size} of {@code table}, or -1. */
    static int indexOf(String[] table, int size, String v) {
        // Hashes first: strings keep theirs, and most lookups of a new campaign miss every entry.
        int hash = v.hashCode();
        for (int i = 0; i < size; i++) {
            if (table[i].hashCode() == hash && table[i].equals(v)) {
                return i;
            }
        }
        return -1;
    }

    /** A copy of {@code a} with {@code v} inserted at {@code pos}. */
    static int[] insert(int[] a, int pos, int v) {
        int[] out = new int[a.length + 1];
        System.arraycopy(a, 0, out, 0, pos);
        out[pos] = v;
        System.arraycopy(a, pos, out, pos + 1, a.length - pos);
        return out;
    }

    /** The position of {@code v} in {@code table} (null: none), or -1. */
    static int indexOf(String[] table, String v) {
        return table == null ? -1 : indexOf(table, table.length, v);
    }
}
