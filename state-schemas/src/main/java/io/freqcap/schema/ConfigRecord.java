package io.freqcap.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/** What a record on the config topic holds: a {@link LimitConfig} or a {@link Command}. */
public sealed interface ConfigRecord permits LimitConfig, ConfigRecord.Command {

    /** {@code {"command": "..."}} (SPEC §7). Unknown names are the caller's to reject. */
    record Command(String name) implements ConfigRecord {
        public static final String REBUILD_MIRROR = "rebuild-mirror";
    }

    /**
     * Reads one config-topic value.
     *
     * @throws MalformedRecordException saying which rule of SPEC §3 the record breaks
     */
    static ConfigRecord parse(byte[] value) throws MalformedRecordException {
        ObjectNode root = readObject(value);
        JsonNode command = root.get("command");
        if (command != null) {
            if (!command.isTextual()) {
                throw new MalformedRecordException("command: expected a string, got " + command);
            }
            return new Command(command.textValue());
        }
        return LimitConfig.fromTree(root, value);
    }

    static ObjectNode readObject(byte[] value) throws MalformedRecordException {
        if (value == null) {
            throw new MalformedRecordException("record has no value (tombstone)");
        }
        JsonNode root;
        try {
            root = Json.MAPPER.readTree(value);
        } catch (IOException e) {
            throw new MalformedRecordException("not valid JSON: " + firstLine(e.getMessage()));
        }
        if (!(root instanceof ObjectNode)) {
            throw new MalformedRecordException("expected a JSON object");
        }
        return (ObjectNode) root;
    }

    private static String firstLine(String s) {
        int nl = s == null ? -1 : s.indexOf('\n');
        return nl < 0 ? String.valueOf(s) : s.substring(0, nl);
    }
}
