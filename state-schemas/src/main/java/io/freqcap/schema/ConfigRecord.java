package io.freqcap.schema;

/**
 * What a record on the config topic holds: a {@link LimitConfig} or a {@link Command}; {@link
 * ConfigTopic#parse} tells which.
 */
public interface ConfigRecord {

    /** {@code {"command": "..."}}. Unknown names are the caller's to reject. */
    record Command(String name) implements ConfigRecord {
        public static final String REBUILD_MIRROR = "rebuild-mirror";
    }
}
