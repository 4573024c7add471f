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
        ObjectNode root = Json.readObject(value);
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
            return new ConfigRecord.Command(command.textValue());
        }
        return LimitConfig.fromTree(root, value);
    }

    /** campaignId as a message's (§2: a string of 1..128 chars or an integer), userId optional. */
    private static ConfigRecord.CancelHeld cancelHeld(ObjectNode root)
            throws MalformedRecordException {
        JsonNode campaign = root.get("campaignId");
        String campaignId;
        if (campaign != null && campaign.isIntegralNumber() && campaign.asText().length() <= 128) {
            campaignId = campaign.asText();
        } else if (campaign != null
                && campaign.isTextual()
                && !campaign.textValue().isEmpty()
                && campaign.textValue().codePointCount(0, campaign.textValue().length()) <= 128
                && OutboundMessage.isWellFormed(campaign.textValue())) {
            campaignId = campaign.textValue();
        } else {
            throw new MalformedRecordException(
                    "campaignId: cancel-held needs a string of 1..128 chars or an integer, got "
                            + shown(campaign));
        }
        JsonNode user = root.get("userId");
        if (user == null || user.isNull()) {
            return new ConfigRecord.CancelHeld(campaignId, null);
        }
        if (!user.isIntegralNumber() || !user.canConvertToLong() || user.longValue() < 0) {
            throw new MalformedRecordException(
                    "userId: cancel-held takes an integer 0..2^63-1, got " + shown(user));
        }
        return new ConfigRecord.CancelHeld(campaignId, user.longValue());
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
