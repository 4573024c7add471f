package io.freqcap.schema.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;

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
            return new ConfigRecord.Command(command.textValue());
        }
        return LimitConfig.fromTree(root, value);
    }
}
