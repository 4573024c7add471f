package io.freqcap.operators.segments;

import io.freqcap.schema.segment.SegmentBitmap;

/**
 * Where a segment's members came from: a {@code uri} whose bytes had this CRC-32, or an inline
 * bitmap (small, since it came in a Kafka record), in {@code format}.
 *
 * @param uri null for an inline bitmap
 * @param crc32 of the bytes read
 * @param inline the inline bitmap's bytes, null for a uri load
 */
record SegmentSource(SegmentBitmap.Format format, String uri, long crc32, byte[] inline) {}
