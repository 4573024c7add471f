package io.freqcap.schema.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.message.OutboundMessage;

/** Reads the values of the config topic: limit configs and commands. */
public final class ConfigTopic {
    private ConfigTopic() {}

    /**
     * Reads one config-topic value.
     *
     * @throws MalformedRecordException saying which rule the record breaks
     */
    public static ConfigRecord parse(byte[] value) throws MalformedRecordException {
        ObjectNode root = Json.readExactObject(value);
        JsonNode command = root.get("command");
        if (command != null) {
            if (!command.isTextual()) {
                throw new MalformedRecordException("command: expected a string, got " + command);
            }
            if (ConfigRecord.Command.FORGET_USER.equals(command.textValue())) {
                JsonNode user = root.get("userId");
                if (user == null
                        || !user.isIntegralNumber()
                        || !user.canConvertToLong()
                        || user.longValue() < 0) {
                    throw new MalformedRecordException(
                            "userId: forget-user needs an integer 0..2^63-1, got " + user);
                }
                return new ConfigRecord.ForgetUser(user.longValue());
            }
            if (ConfigRecord.Command.CANCEL_HELD.equals(command.textValue())) {
                return cancelHeld(root);
            }
            if (ConfigRecord.Command.END_CAMPAIGN.equals(command.textValue())) {
                String campaignId = campaignId(root.get("campaignId"), "end-campaign");
                if (campaignId == null) {
                    throw new MalformedRecordException(
                            "campaignId: end-campaign needs a campaignId, got none");
                }
                return new ConfigRecord.EndCampaign(campaignId);
            }
            return new ConfigRecord.Command(command.textValue());
        }
        return LimitConfig.fromTree(root, value);
    }

    /**
     * The withdrawal asked (contract.md §7): campaignId as a message's (§2: a string of 1..128
     * chars or an integer), userId an integer 0..2^63-1, messageId a string of 1..128 chars; at
     * least one of campaignId and userId, and messageId only with userId. A field given as null is
     * not given.
     */
    private static ConfigRecord.CancelHeld cancelHeld(ObjectNode root)
            throws MalformedRecordException {
        String campaignId = campaignId(root.get("campaignId"), "cancel-held");
        Long userId = userId(root.get("userId"));
        String messageId = messageId(root.get("messageId"));
        if (campaignId == null && userId == null) {
            throw new MalformedRecordException(
                    "cancel-held needs a campaignId or a userId (or both), got neither");
        }
        if (messageId != null && userId == null) {
            throw new MalformedRecordException(
                    "messageId: cancel-held takes it only with a userId");
        }
        return new ConfigRecord.CancelHeld(campaignId, userId, messageId);
    }

    private static String campaignId(JsonNode campaign, String command)
            throws MalformedRecordException {
        if (campaign == null || campaign.isNull()) {
            return null;
        }
        if (campaign.isIntegralNumber() && campaign.asText().length() <= 128) {
            return campaign.asText();
        }
        if (isText(campaign, OutboundMessage.MAX_CAMPAIGN_ID_CHARS)) {
            return campaign.textValue();
        }
        throw new MalformedRecordException(
                "campaignId: "
                        + command
                        + " takes a string of 1..128 chars or an integer, got "
                        + shown(campaign));
    }

    private static Long userId(JsonNode user) throws MalformedRecordException {
        if (user == null || user.isNull()) {
            return null;
        }
        if (!user.isIntegralNumber() || !user.canConvertToLong() || user.longValue() < 0) {
            throw new MalformedRecordException(
                    "userId: cancel-held takes an integer 0..2^63-1, got " + shown(user));
        }
        return user.longValue();
    }

    private static String messageId(JsonNode id) throws MalformedRecordException {
        if (id == null || id.isNull()) {
            return null;
        }
        if (isText(id, OutboundMessage.MAX_MESSAGE_ID_CHARS)) {
            return id.textValue();
        }
        throw new MalformedRecordException(
                "messageId: cancel-held takes a string of 1..128 chars, got " + shown(id));
    }

    /** A string of 1..max characters (code points), each a character (no half surrogate pair). */
    private static boolean isText(JsonNode n, int max) {
        if (!n.isTextual() || n.textValue().isEmpty()) {
            return false;
        }
        String v = n.textValue();
        return v.codePointCount(0, v.length()) <= max && OutboundMessage.isWellFormed(v);
    }

    /** A field's value for an error text: short, never the whole of a hostile value. */
    private static String shown(JsonNode n) {
        if (n == null) {
            return "nothing";
        }
        String s = n.toString();
        return s.length() <= 64 ? s : s.substring(0, 64) + "...";
    }
}
