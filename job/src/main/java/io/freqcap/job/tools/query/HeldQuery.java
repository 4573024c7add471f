package io.freqcap.job.tools.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.job.KafkaClientConfig;
import io.freqcap.job.KafkaHeldTopic;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.held.HeldNotice;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
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
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

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

    /**
     * Runs the query; the exit code: 0, 1 when the topic cannot be read (a broker away, no such
     * topic: one line says which), 2 for a bad command line.
     */
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
        String unreadable = unreadable(q, Duration.ofSeconds(10));
        if (unreadable != null) {
            err.println("freqcap-query: " + unreadable);
            return 1;
        }
        List<JsonNode> waiting;
        try {
            waiting = read(q);
        } catch (RuntimeException e) {
            // The topic went away, a partition lost its leader, a permission was refused.
            err.println(
                    "freqcap-query: cannot read the held topic "
                            + q.topic()
                            + " at "
                            + q.bootstrap()
                            + ": "
                            + e.getMessage());
            return 1;
        }
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

    /**
     * Why the held topic cannot be read, in one line, or null: the brokers do not answer within
     * {@code timeout}, or the topic does not exist.
     */
    static String unreadable(Query q, Duration timeout) {
        Properties p = KafkaClientConfig.properties(q.clientProperties());
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, q.bootstrap());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        Admin admin = null;
        try {
            admin = Admin.create(p);
            admin.describeTopics(List.of(q.topic()))
                    .allTopicNames()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return null;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return "the held topic " + q.topic() + " does not exist at " + q.bootstrap();
            }
            if (e.getCause() instanceof org.apache.kafka.common.errors.TimeoutException) {
                return noAnswer(q, timeout);
            }
            return "cannot read the held topic "
                    + q.topic()
                    + " at "
                    + q.bootstrap()
                    + ": "
                    + e.getCause().getMessage();
        } catch (java.util.concurrent.TimeoutException e) {
            return noAnswer(q, timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        } catch (RuntimeException e) {
            return "cannot read the held topic " + q.topic() + " at " + q.bootstrap() + ": " + e;
        } finally {
            if (admin != null) {
                admin.close(Duration.ofSeconds(1)); // a broker that does not answer: no more waits
            }
        }
    }

    private static String noAnswer(Query q, Duration timeout) {
        return "no answer from Kafka at "
                + q.bootstrap()
                + " within "
                + timeout.toSeconds()
                + " s (is it running, and are --bootstrap-servers and --kafka-config right?)";
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
        return waiting(live, q.campaign());
    }

    /**
     * The live records that are notices the job wrote (contract.md §12), of the campaign asked for,
     * in send-time order. Anything else on the topic (another writer's JSON, say) is not what
     * waits.
     *
     * @param campaign null for every campaign
     */
    static List<JsonNode> waiting(Map<ByteBuffer, byte[]> live, String campaign) {
        List<JsonNode> out = new ArrayList<>();
        live.forEach(
                (key, value) -> {
                    JsonNode n = notice(key.array(), value);
                    if (n != null
                            && (campaign == null
                                    || campaign.equals(n.path("campaignId").asText(null)))) {
                        out.add(n);
                    }
                });
        out.sort(
                Comparator.comparingLong((JsonNode n) -> n.path("sendAt").asLong())
                        .thenComparing(n -> n.path("messageId").asText()));
        return out;
    }

    /**
     * The notice of a live record, or null when it is not one the job writes: a JSON object with
     * the userId its key names, a messageId, and integral timestamp and sendAt.
     */
    static JsonNode notice(byte[] key, byte[] value) {
        Long user = HeldNotice.userOf(key);
        JsonNode n;
        try {
            n = Json.MAPPER.readTree(value);
        } catch (IOException e) {
            return null;
        }
        if (user == null
                || n == null
                || !n.isObject()
                || !n.path("userId").isIntegralNumber()
                || n.path("userId").asLong() != user
                || !n.path("messageId").isTextual()
                || !n.path("timestamp").isIntegralNumber()
                || !n.path("sendAt").isIntegralNumber()) {
            return null;
        }
        return n;
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
                    HeldReasons.of(n.path("heldBy")));
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
