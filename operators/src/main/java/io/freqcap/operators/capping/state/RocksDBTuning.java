package io.freqcap.operators.capping.state;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one place that tunes RocksDB for the history store: the job sets these itself (so a cluster
 * needs nothing for them, and other jobs on it are not affected). Measured in docs/benchmarks.md.
 *
 * <ul>
 *   <li>A user's history is ~50 bytes: ZSTD over 16 KB blocks finds what histories share (channel
 *       names, timestamp prefixes), about 60 bytes per user on disk.
 *   <li>Level 0 (memtable flushes, compacted away within seconds) is not compressed: flushes,
 *       compactions and reads of fresh data cost half as much CPU, and every level where state
 *       stays is still ZSTD.
 *   <li>One point read per message: small memtables with a bloom filter are searched fast; {@link
 *       PointLookupRocksDBOptions} sets what has no Flink option.
 * </ul>
 */
public final class RocksDBTuning {
    private RocksDBTuning() {}

    /** Flink configuration keys and values. */
    public static final Map<String, String> SETTINGS = settings();

    private static Map<String, String> settings() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("state.backend.rocksdb.compression.per.level", "NO_COMPRESSION;ZSTD_COMPRESSION");
        s.put("state.backend.rocksdb.block.blocksize", "16kb");
        s.put("state.backend.rocksdb.writebuffer.size", "16mb");
        s.put("state.backend.rocksdb.use-bloom-filter", "true");
        s.put("state.backend.rocksdb.options-factory", PointLookupRocksDBOptions.class.getName());
        return java.util.Collections.unmodifiableMap(s);
    }
}
