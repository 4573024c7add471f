package io.freqcap.operators.capping;

import io.freqcap.operators.segments.FlinkFileLoader;
import io.freqcap.schema.decision.AuditRecords;
import io.freqcap.schema.lifetime.LifetimeCount;
import io.freqcap.schema.message.FutureBound;
import java.io.Serializable;
import java.util.List;

/**
 * What bounds the job's records and reads, so that no input, however large or hostile, can stop it:
 * the largest output record ({@code --max-record-bytes}; larger inputs are MALFORMED, audit records
 * are cut to fit) and where and how much segment files are read from ({@code --segment-uris},
 * {@code --max-segment-bytes}), how far ahead of the wall clock a message may be stamped ({@code
 * --max-future}), and how long a user's lifetime count of a campaign outlives its latest send time
 * ({@code --lifetime-retention}), so that state stays bounded.
 *
 * @param segmentUris uri prefixes segment files may be read from; empty for any
 */
public record Bounds(
        int maxRecordBytes,
        long maxSegmentBytes,
        List<String> segmentUris,
        FutureBound maxFuture,
        long lifetimeRetentionMillis)
        implements Serializable {
    public static final Bounds DEFAULTS =
            new Bounds(
                    AuditRecords.DEFAULT_MAX_BYTES,
                    FlinkFileLoader.DEFAULT_MAX_BYTES,
                    List.of(),
                    FutureBound.ONE_DAY,
                    LifetimeCount.DEFAULT_RETENTION_MILLIS);

    /**
     * The smallest {@code --max-record-bytes}: an audit record's own fields with every id at its
     * bound (a messageId, a preempting one and its reason, segments of astral characters) take up
     * to about 2.5 KB, and a record must fit them whatever it leaves out.
     */
    public static final int MIN_RECORD_BYTES = AuditRecords.MIN_MAX_BYTES;

    /** Bounds with the default {@code --max-future} and {@code --lifetime-retention}. */
    public Bounds(int maxRecordBytes, long maxSegmentBytes, List<String> segmentUris) {
        this(
                maxRecordBytes,
                maxSegmentBytes,
                segmentUris,
                FutureBound.ONE_DAY,
                LifetimeCount.DEFAULT_RETENTION_MILLIS);
    }

    public Bounds {
        if (maxRecordBytes < MIN_RECORD_BYTES) {
            throw new IllegalArgumentException(
                    "max record bytes must be at least "
                            + MIN_RECORD_BYTES
                            + ", got "
                            + maxRecordBytes);
        }
        segmentUris = List.copyOf(segmentUris);
        if (lifetimeRetentionMillis <= 0) {
            throw new IllegalArgumentException(
                    "lifetime retention must be positive, got " + lifetimeRetentionMillis);
        }
    }

    /** Opens segment files within these bounds. */
    public FlinkFileLoader segmentLoader() {
        return new FlinkFileLoader(maxSegmentBytes, segmentUris);
    }
}
