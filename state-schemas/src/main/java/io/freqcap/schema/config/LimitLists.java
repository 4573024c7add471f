package io.freqcap.schema.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.common.MalformedRecordException;
import java.util.List;
import java.util.Map;

/**
 * Lists of limits as other records than a limit config carry them (a user's own limits, contract.md
 * §10): read and bounded as a rule's (§3), without {@code reserve}.
 */
public final class LimitLists {
    private LimitLists() {}

    /** A possibly empty list of limits, or none ({@code null} or absent: empty). */
    public static List<Limit> list(JsonNode node, String path) throws MalformedRecordException {
        return node == null || node.isNull()
                ? List.of()
                : RuleParser.limits(node, path, true, false);
    }

    /** Limits by channel name (the channel pattern of §2), {@code field} under {@code path}. */
    public static Map<String, List<Limit>> named(
            JsonNode node, String path, String field, String what) throws MalformedRecordException {
        return RuleParser.named(node, path, field, what, false);
    }

    /**
     * Limits by category: any category a message may carry (1..64 code points, contract.md §10).
     */
    public static Map<String, List<Limit>> byCategory(JsonNode node, String path, String field)
            throws MalformedRecordException {
        return RuleParser.named(node, path, field, "category", false, true);
    }

    /** How many names a by-name map (or a list of names) may have. */
    public static final int MAX_NAMES = RuleParser.MAX_NAMED_LISTS;
}
