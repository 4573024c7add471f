package io.freqcap.job.tools.query;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** What held a message, as a HeldNotice's {@code heldBy} says it (contract.md §12), in words. */
final class HeldReasons {
    private HeldReasons() {}

    /** What held a message, in words: "all day max 1 (1 counted); quiet hours 21:00-08:00". */
    static String of(JsonNode heldBy) {
        if (heldBy.isEmpty()) {
            return "(not recorded: held before freqcap wrote notices)";
        }
        List<String> out = new ArrayList<>();
        for (JsonNode v : heldBy) {
            String scope = v.path("scope").asText();
            if (scope.equals("quiet-hours")) {
                out.add("quiet hours " + v.path("from").asText() + "-" + v.path("to").asText());
            } else if (scope.equals("preference:paused")) {
                out.add(
                        "paused by the user until "
                                + Instant.ofEpochMilli(v.path("until").asLong()));
            } else {
                String span =
                        v.has("calendar")
                                ? "per " + v.get("calendar").asText()
                                : "in " + v.path("window").asText();
                out.add(
                        scope
                                + " max "
                                + v.path("max").asInt()
                                + " "
                                + span
                                + " ("
                                + v.path("count").asInt()
                                + " counted"
                                + (v.has("fatigue")
                                        ? ", lowered from "
                                                + v.path("fatigue").path("configured").asInt()
                                                + " after "
                                                + v.path("fatigue").path("unengaged").asLong()
                                                + " sends with no open"
                                        : "")
                                + ")");
            }
        }
        return String.join("; ", out);
    }
}
