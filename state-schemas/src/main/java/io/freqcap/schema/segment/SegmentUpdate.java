package io.freqcap.schema.segment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.LimitConfig;
import java.util.Base64;

/**
 * A record of the segments topic (contract.md §4): a full load of a segment from a {@code uri} or
 * an inline base64 {@code bitmap}, an {@code add} or {@code remove} of userIds, or a {@code
 * delete}.
 *
 * @param uri for a full load from a file system, else null
 * @param bitmap for an inline full load, the decoded bytes, else null
 * @param userIds for add and remove, else empty
 */
public record SegmentUpdate(
        String segmentId,
        long version,
        Op op,
        int priority,
        SegmentBitmap.Format format,
        String uri,
        byte[] bitmap,
        long[] userIds) {

    public enum Op {
        LOAD,
        ADD,
        REMOVE,
        DELETE
    }

    public static SegmentUpdate parse(byte[] value) throws MalformedRecordException {
        return fromTree(Json.readObject(value));
    }

    public static SegmentUpdate fromTree(JsonNode root) throws MalformedRecordException {
        if (!(root instanceof ObjectNode)) {
            throw new MalformedRecordException("expected a JSON object");
        }
        JsonNode id = root.get("segmentId");
        if (id == null || !id.isTextual() || id.textValue().isEmpty()) {
            throw new MalformedRecordException("segmentId: expected a non-empty string");
        }
        int chars = id.textValue().codePointCount(0, id.textValue().length());
        if (chars > LimitConfig.MAX_SEGMENT_ID_CHARS) {
            throw new MalformedRecordException(
                    "segmentId: must be 1.."
                            + LimitConfig.MAX_SEGMENT_ID_CHARS
                            + " characters, got "
                            + chars);
        }
        JsonNode v = root.get("version");
        if (v == null || !v.isIntegralNumber() || !v.canConvertToLong() || v.longValue() <= 0) {
            throw new MalformedRecordException("version: expected a positive integer, got " + v);
        }
        JsonNode opNode = root.get("op");
        Op op;
        if (opNode == null || opNode.isNull()) {
            op = Op.LOAD;
        } else if (!opNode.isTextual()) {
            throw new MalformedRecordException("op: expected add, remove or delete");
        } else {
            switch (opNode.textValue()) {
                case "add":
                    op = Op.ADD;
                    break;
                case "remove":
                    op = Op.REMOVE;
                    break;
                case "delete":
                    op = Op.DELETE;
                    break;
                default:
                    throw new MalformedRecordException(
                            "op: expected add, remove or delete, got \""
                                    + opNode.textValue()
                                    + "\"");
            }
        }
        String segmentId = id.textValue();
        long version = v.longValue();
        if (op == Op.DELETE) {
            return new SegmentUpdate(segmentId, version, op, 0, null, null, null, new long[0]);
        }
        if (op == Op.ADD || op == Op.REMOVE) {
            JsonNode ids = root.get("userIds");
            if (ids == null || !ids.isArray()) {
                throw new MalformedRecordException("userIds: expected an array of userIds");
            }
            long[] out = new long[ids.size()];
            for (int i = 0; i < out.length; i++) {
                JsonNode u = ids.get(i);
                if (!u.isIntegralNumber() || !u.canConvertToLong() || u.longValue() < 0) {
                    throw new MalformedRecordException(
                            "userIds[" + i + "]: expected an integer 0..2^63-1, got " + u);
                }
                out[i] = u.longValue();
            }
            return new SegmentUpdate(segmentId, version, op, 0, null, null, null, out);
        }
        JsonNode p = root.get("priority");
        int priority = 0;
        if (p != null && !p.isNull()) {
            if (!p.isIntegralNumber() || !p.canConvertToInt()) {
                throw new MalformedRecordException("priority: expected an integer, got " + p);
            }
            priority = p.intValue();
        }
        JsonNode f = root.get("format");
        if (f == null || !f.isTextual()) {
            throw new MalformedRecordException("format: expected roaring32 or roaring64");
        }
        SegmentBitmap.Format format = SegmentBitmap.Format.of(f.textValue());
        JsonNode uri = root.get("uri");
        JsonNode bitmap = root.get("bitmap");
        boolean hasUri = uri != null && !uri.isNull();
        boolean hasBitmap = bitmap != null && !bitmap.isNull();
        if (hasUri == hasBitmap) {
            throw new MalformedRecordException("a full load needs exactly one of uri and bitmap");
        }
        if (hasUri) {
            if (!uri.isTextual() || uri.textValue().isEmpty()) {
                throw new MalformedRecordException("uri: expected a string");
            }
            return new SegmentUpdate(
                    segmentId, version, op, priority, format, uri.textValue(), null, new long[0]);
        }
        if (!bitmap.isTextual()) {
            throw new MalformedRecordException("bitmap: expected base64 text");
        }
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(bitmap.textValue());
        } catch (IllegalArgumentException e) {
            throw new MalformedRecordException("bitmap: not base64 (" + e.getMessage() + ")");
        }
        return new SegmentUpdate(
                segmentId, version, op, priority, format, null, bytes, new long[0]);
    }
}
