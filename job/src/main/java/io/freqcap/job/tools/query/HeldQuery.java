package io.freqcap.job.tools.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.job.KafkaClientConfig;
import io.freqcap.job.KafkaHeldTopic;
import io.freqcap.schema.common.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code freqcap-query --held}: what waits (contract.md §8, §12), read from the held-messages topic
 * from its beginning, {@code read_committed}, as any consumer would read it. For one user ({@code
 * --user}): each waiting message with its send time in the user's zone, its campaign and priority,
 * and what held it. Otherwise a summary: how many wait, by campaign and by hour of send time (UTC),
 * and the earliest and latest send times. {@code --campaign} keeps one campaign's messages; {@code
 * --json} prints one JSON object for a machine to read.
 */
public final class HeldQuery {
    private HeldQuery() {}

    static final String USAGE =
            "usage: freqcap-query --held --bootstrap-servers HOST:PORT [--held-topic held-messages]"
                    + " [--user USERID] [--campaign CAMPAIGN] [--json] [--kafka-config FILE]";

    private static final DateTimeFormatter LOCAL =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm xxx");

    private static final DateTimeFormatter HOUR =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:00'Z'").withZone(ZoneOffset.UTC);

    /** What the command line asks for. */
    record Query(
            String bootstrap,
            String topic,
            Long user,
            String campaign,
            boolean json,
            Map<String, String> clientProperties) {}

    public static void main(String[] args) throws Exception {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the query; the exit code (0, or 2 for a bad command line). */
    public static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        Query q;
        try {
            q = parse(args);
        } catch (IllegalArgumentException e) {
            err.println("freqcap-query: " + e.getMessage() + "\n" + USAGE);
            return 2;
        }
        if (q == null) {
            out.println(USAGE);
            return 0;
        }
        List<JsonNode> waiting = read(q);
        if (q.user() != null) {
            printUser(q, waiting, out);
        } else {
            printSummary(q, waiting, out);
        }
        return 0;
    }

    /** The query of a command line; null for {@code --help}. */
    static Query parse(String[] args) throws IOException {
        Map<String, String> opts = new LinkedHashMap<>();
        boolean json = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--help" -> {
                    return null;
                }
                case "--held" -> {}
                case "--json" -> json = true;
                case "--bootstrap-servers",
                        "--held-topic",
                        "--user",
                        "--campaign",
                        "--kafka-config" -> {
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException("no value for " + args[i]);
                    }
                    opts.put(args[i].substring(2), args[++i]);
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (!opts.containsKey("bootstrap-servers")) {
            throw new IllegalArgumentException("--held needs --bootstrap-servers");
        }
        Long user = null;
        if (opts.containsKey("user")) {
            try {
                user = Long.parseLong(opts.get("user"));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--user: not a userId: " + opts.get("user"));
            }
        }
        Map<String, String> client = Map.of();
        if (opts.containsKey("kafka-config")) {
            try {
                client = KafkaClientConfig.read(Path.of(opts.get("kafka-config")));
            } catch (IOException | RuntimeException e) {
                throw new IllegalArgumentException(
                        "--kafka-config: cannot read " + opts.get("kafka-config") + ": " + e);
            }
        }
        return new Query(
                opts.get("bootstrap-servers"),
                opts.getOrDefault("held-topic", "held-messages"),
                user,
                opts.get("campaign"),
                json,
                client);
    }

    /** The notices live now that the query keeps, in send-time order. */
    static List<JsonNode> read(Query q) {
        String prefix = q.user() == null ? null : q.user() + "/";
        var live =
                KafkaHeldTopic.live(
                        q.bootstrap(),
                        q.clientProperties(),
                        q.topic(),
                        java.time.Duration.ZERO,
                        key ->
                                prefix == null
                                        || new String(key, StandardCharsets.UTF_8)
                                                .startsWith(prefix));
        List<JsonNode> out = new ArrayList<>();
        for (byte[] v : live.values()) {
            try {
                JsonNode n = Json.MAPPER.readTree(v);
                if (n != null
                        && n.isObject()
                        && (q.campaign() == null
                                || q.campaign().equals(n.path("campaignId").asText(null)))) {
                    out.add(n);
                }
            } catch (IOException e) {
                // not a notice this job wrote: not what waits
            }
        }
        out.sort(
                Comparator.comparingLong((JsonNode n) -> n.path("sendAt").asLong())
                        .thenComparing(n -> n.path("messageId").asText()));
        return out;
    }

    static void printUser(Query q, List<JsonNode> waiting, PrintStream out) {
        if (q.json()) {
            ObjectNode o = Json.MAPPER.createObjectNode();
            o.put("userId", q.user());
            ArrayNode a = o.putArray("waiting");
            for (JsonNode n : waiting) {
                ObjectNode copy = ((ObjectNode) n).deepCopy();
                copy.put("sendAtLocal", local(n));
                a.add(copy);
            }
            out.println(o);
            return;
        }
        out.printf(
                "user %d: %d message%s waiting (%s)%n",
                q.user(), waiting.size(), waiting.size() == 1 ? "" : "s", q.topic());
        for (JsonNode n : waiting) {
            out.printf(
                    "  %s  %s  %s/%s%s  priority %d%n      held by: %s%n",
                    local(n),
                    n.path("messageId").asText(),
                    n.path("channel").asText(),
                    n.path("category").asText(),
                    n.has("campaignId") ? "  campaign " + n.get("campaignId").asText() : "",
                    n.path("priority").asInt(),
                    reasons(n.path("heldBy")));
        }
    }

    /** A message's send time in its user's zone. */
    static String local(JsonNode n) {
        ZoneId zone;
        try {
            zone = ZoneId.of(n.path("timezone").asText("UTC"));
        } catch (RuntimeException e) {
            zone = ZoneOffset.UTC;
        }
        return LOCAL.format(Instant.ofEpochMilli(n.path("sendAt").asLong()).atZone(zone))
                + " "
                + zone.getId();
    }

    /** What held a message, in words: "all day max 1 (1 counted); quiet hours 21:00-08:00". */
    static String reasons(JsonNode heldBy) {
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

    static void printSummary(Query q, List<JsonNode> waiting, PrintStream out) {
        Map<String, Integer> byCampaign = new TreeMap<>();
        Map<String, Integer> byHour = new TreeMap<>();
        for (JsonNode n : waiting) {
            byCampaign.merge(n.path("campaignId").asText("(none)"), 1, Integer::sum);
            Instant at =
                    Instant.ofEpochMilli(n.path("sendAt").asLong()).truncatedTo(ChronoUnit.HOURS);
            byHour.merge(HOUR.format(at), 1, Integer::sum);
        }
        Long earliest = waiting.isEmpty() ? null : waiting.get(0).path("sendAt").asLong();
        Long latest =
                waiting.isEmpty() ? null : waiting.get(waiting.size() - 1).path("sendAt").asLong();
        if (q.json()) {
            ObjectNode o = Json.MAPPER.createObjectNode();
            o.put("waiting", waiting.size());
            ObjectNode c = o.putObject("byCampaign");
            byCampaign.forEach(c::put);
            ObjectNode h = o.putObject("byHour");
            byHour.forEach(h::put);
            if (earliest != null) {
                o.put("earliest", earliest);
                o.put("latest", latest);
            }
            out.println(o);
            return;
        }
        out.printf(
                "%d message%s waiting (%s%s)%n",
                waiting.size(),
                waiting.size() == 1 ? "" : "s",
                q.topic(),
                q.campaign() == null ? "" : ", campaign " + q.campaign());
        if (waiting.isEmpty()) {
            return;
        }
        out.printf(
                "  earliest send time %s, latest %s%n",
                Instant.ofEpochMilli(earliest), Instant.ofEpochMilli(latest));
        out.println("  by campaign:");
        byCampaign.forEach((k, v) -> out.printf("    %-32s %d%n", k, v));
        out.println("  by hour of send time (UTC):");
        byHour.forEach((k, v) -> out.printf("    %s  %d%n", k, v));
    }
}
