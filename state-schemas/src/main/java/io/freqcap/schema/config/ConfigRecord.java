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
        public static final String END_CAMPAIGN = "end-campaign";
    }

    /**
     * {@code {"command": "end-campaign", "campaignId": ...}}: drop every user's lifetime count of
     * the campaign (contract.md §3, §7); held messages stay as they are.
     */
    record EndCampaign(String campaignId) implements ConfigRecord {}

    /** {@code {"command": "forget-user", "userId": 42}}: erase everything kept of one user. */
    record ForgetUser(long userId) implements ConfigRecord {}

    /**
     * {@code {"command": "cancel-held", ...}}: withdraw held messages (contract.md §7): a
     * campaign's ({@code "campaignId"}), of one user or every user; every one of a user ({@code
     * "userId"} alone); or one message of a user ({@code "userId"} and {@code "messageId"}).
     *
     * @param campaignId the campaign whose messages are withdrawn, or null for any campaign (then
     *     userId is set)
     * @param userId the one user whose messages are withdrawn, or null for every user
     * @param messageId the one message withdrawn, or null for every one that matches (set only with
     *     userId)
     */
    record CancelHeld(String campaignId, Long userId, String messageId) implements ConfigRecord {
        /** A campaign's held messages, of one user (null: every user). */
        public CancelHeld(String campaignId, Long userId) {
            this(campaignId, userId, null);
        }

        /** Whether the command withdraws this held message of this user. */
        public boolean takes(long user, String heldCampaignId, String heldMessageId) {
            return (userId == null || userId == user)
                    && (campaignId == null || campaignId.equals(heldCampaignId))
                    && (messageId == null || messageId.equals(heldMessageId));
        }

        /** What it withdraws, for a log line: "campaign c of user 42", "message m of user 42". */
        public String describe() {
            StringBuilder b = new StringBuilder();
            if (messageId != null) {
                b.append("message ").append(messageId);
                if (campaignId != null) {
                    b.append(" of campaign ").append(campaignId);
                }
            } else if (campaignId != null) {
                b.append("campaign ").append(campaignId);
            } else {
                b.append("every held message");
            }
            return userId == null ? b.toString() : b.append(" of user ").append(userId).toString();
        }
    }
}
