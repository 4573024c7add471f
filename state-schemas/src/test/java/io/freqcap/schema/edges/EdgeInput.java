package io.freqcap.schema.edges;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * One record as Kafka would deliver it: the topic it is read from, its key and value bytes (either
 * may be null), and what the contract says of it.
 *
 * @param why the part that makes it invalid or unsettled (a field's path, or the shape), or null
 */
public record EdgeInput(Topic topic, byte[] key, byte[] value, Validity validity, String why) {

    /** The input topics (contract.md §1), by their default names. */
    public enum Topic {
        MESSAGES("outbound-messages"),
        CONFIG("limit-config"),
        SEGMENTS("segment-updates"),
        PREFERENCES("user-preferences"),
        RECEIPTS("delivery-receipts");

        public final String defaultName;

        Topic(String defaultName) {
            this.defaultName = defaultName;
        }
    }

    static EdgeInput of(Topic topic, String key, String value, Validity validity, String why) {
        return new EdgeInput(topic, bytes(key), bytes(value), validity, why);
    }

    static byte[] bytes(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    /** Bytes as text when they are UTF-8, else as base64 (prefixed {@code base64:}). */
    public static String show(byte[] b) {
        if (b == null) {
            return "null";
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b))
                    .toString();
        } catch (CharacterCodingException e) {
            return "base64:" + Base64.getEncoder().encodeToString(b);
        }
    }

    /** The record as a line of a reproducer: topic, validity, key and value, long ones cut. */
    @Override
    public String toString() {
        return describe(true);
    }

    /**
     * The record as a line of a reproducer: topic, validity, key and value.
     *
     * @param abbreviate cut keys and values longer than 400 characters in the middle
     */
    public String describe(boolean abbreviate) {
        String k = key == null ? "" : " key=" + cut(show(key), abbreviate);
        String v = validity + (why == null || validity == Validity.VALID ? "" : ": " + why);
        return topic.defaultName + " (" + v + ")" + k + " " + cut(show(value), abbreviate);
    }

    static String cut(String s, boolean abbreviate) {
        if (!abbreviate || s.length() <= 400) {
            return s;
        }
        return s.substring(0, 300)
                + " ...("
                + s.length()
                + " chars)... "
                + s.substring(s.length() - 60);
    }
}
