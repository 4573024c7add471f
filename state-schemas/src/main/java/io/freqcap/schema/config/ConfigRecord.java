package io.freqcap.schema.config;

/**
 * What a record on the config topic holds: a {@link LimitConfig}, a {@link Command} or a {@link
 * ForgetUser}; {@link ConfigTopic#parse} tells which.
 */
public interface ConfigRecord {

    /** {@code {"command": "..."}}. Unknown names are the caller's to reject. */
    record Command(String name) implements ConfigRecord {
        public static final String REBUILD_MIRROR = "rebuild-mirror";
        public static final String FORGET_USER = "forget-user";
        public static final String CANCEL_HELD = "cancel-held";
    }

    /** {@code {"command": "forget-user", "userId": 42}}: erase everything kept of one user. */
    record ForgetUser(long userId) implements ConfigRecord {}

    /**
     * {@code {"command": "cancel-held", "campaignId": "spring-sale"}}, optionally with {@code
     * userId}: withdraw the held messages of a campaign (contract.md §7).
     *
     * @param userId the one user whose messages are withdrawn, or null for every user
     */
    record CancelHeld(String campaignId, Long userId) implements ConfigRecord {}
}
