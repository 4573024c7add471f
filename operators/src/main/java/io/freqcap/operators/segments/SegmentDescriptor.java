package io.freqcap.operators.segments;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.segment.SegmentBitmap;
import java.io.IOException;
import java.util.Base64;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * What checkpoints keep of one segment (broadcast state, as JSON text): its version, and unless it
 * was deleted its priority and format, where its members come from (a {@code uri} with the CRC-32
 * of the bytes read and the version that loaded it, or an inline bitmap, small since it came in a
 * Kafka record), and the add/remove deltas applied since. Never the bitmap of a uri load: a restore
 * reads the uri again.
 *
 * @param source null for a deleted segment
 * @param loadVersion the version that loaded a uri's bytes
 */
record SegmentDescriptor(
        long version,
        boolean deleted,
        int priority,
        SegmentSource source,
        long loadVersion,
        Roaring64NavigableMap added,
        Roaring64NavigableMap removed) {

    static SegmentDescriptor tombstone(long version) {
        return new SegmentDescriptor(version, true, 0, null, 0, null, null);
    }

    SegmentBitmap.Format format() {
        return source.format();
    }

    /** Null for an inline bitmap. */
    String uri() {
        return source.uri();
    }

    long crc32() {
        return source.crc32();
    }

    /** The inline bitmap's bytes, null for a uri load. */
    byte[] inline() {
        return source.inline();
    }

    String toJson() {
        ObjectNode d = Json.MAPPER.createObjectNode();
        d.put("version", version);
        d.put("deleted", deleted);
        if (!deleted) {
            d.put("priority", priority);
            d.put("format", source.format().wireName);
            if (source.uri() != null) {
                d.put("uri", source.uri());
                d.put("crc32", source.crc32());
                d.put("loadVersion", loadVersion);
            } else {
                d.put("bitmap", Base64.getEncoder().encodeToString(source.inline()));
            }
            ArrayNode a = d.putArray("added");
            added.forEach(a::add);
            ArrayNode r = d.putArray("removed");
            removed.forEach(r::add);
        }
        return d.toString();
    }

    static SegmentDescriptor parse(String json) throws IOException {
        JsonNode d = Json.MAPPER.readTree(json);
        long version = d.get("version").asLong();
        if (d.get("deleted").asBoolean()) {
            return tombstone(version);
        }
        SegmentBitmap.Format format;
        try {
            format = SegmentBitmap.Format.of(d.get("format").asText());
        } catch (MalformedRecordException e) {
            throw new IOException(e.getMessage());
        }
        String uri = d.hasNonNull("uri") ? d.get("uri").asText() : null;
        Roaring64NavigableMap added = new Roaring64NavigableMap();
        d.get("added").forEach(n -> added.addLong(n.asLong()));
        Roaring64NavigableMap removed = new Roaring64NavigableMap();
        d.get("removed").forEach(n -> removed.addLong(n.asLong()));
        return new SegmentDescriptor(
                version,
                false,
                d.get("priority").asInt(),
                new SegmentSource(
                        format,
                        uri,
                        uri == null ? 0 : d.get("crc32").asLong(),
                        uri == null ? Base64.getDecoder().decode(d.get("bitmap").asText()) : null),
                uri == null ? 0 : d.path("loadVersion").asLong(version),
                added,
                removed);
    }
}
