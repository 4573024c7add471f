package io.freqcap.operators.capping.state;

import java.util.Collection;
import org.apache.flink.state.rocksdb.RocksDBOptionsFactory;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;

/**
 * RocksDB options for the capping operator's access pattern: one point read (and mostly one write)
 * per message, keys spread uniformly over all users. Most reads look for a key that is not in the
 * memtable (the user was last written minutes ago), and a full skiplist search per read was a third
 * of the read cost in the end-to-end profile: a whole-key bloom filter on the memtable answers
 * those misses at once. Everything else stays at Flink's defaults and the {@code
 * state.backend.rocksdb.*} options, which are applied before this factory.
 */
public class PointLookupRocksDBOptions implements RocksDBOptionsFactory {
    private static final long serialVersionUID = 1L;

    @Override
    public DBOptions createDBOptions(
            DBOptions currentOptions, Collection<AutoCloseable> handlesToClose) {
        return currentOptions;
    }

    @Override
    public ColumnFamilyOptions createColumnOptions(
            ColumnFamilyOptions currentOptions, Collection<AutoCloseable> handlesToClose) {
        return currentOptions
                .setMemtableWholeKeyFiltering(true)
                .setMemtablePrefixBloomSizeRatio(0.1);
    }
}
