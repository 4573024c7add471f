package io.freqcap.job.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The capping tasks' held-message counters ({@code held}, {@code released}, {@code heldNow}, summed
 * over tasks), those of preferences and receipts applied, and of fatigue (messages decided under a
 * lowered cap, engagements), read from the local Flink's REST API for the progress line: held
 * messages wait in the job's state, so the output topics cannot tell how many there are.
 */
final class HeldProgress {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The capping tasks' metrics, summed, by name ({@code capping.held}, ...). */
    record Counts(Map<String, Long> sums) {
        static final Counts UNKNOWN = new Counts(Map.of());

        /** The sum of {@code capping.<metric>}; -1 where not known (yet). */
        long of(String metric) {
            return sums.getOrDefault("capping." + metric, -1L);
        }
    }

    private final HttpClient http = HttpClient.newHttpClient();
    private final String job;
    private String metrics;

    /**
     * @param rest the REST API's base, {@code http://localhost:8081}
     */
    HeldProgress(String rest, String jobId) {
        this.job = rest + "/jobs/" + jobId;
    }

    Counts counts() {
        try {
            if (metrics == null) {
                for (JsonNode v : get(job).path("vertices")) {
                    if (v.path("name").asText().startsWith("capping")) {
                        metrics =
                                job
                                        + "/vertices/"
                                        + v.path("id").asText()
                                        + "/subtasks/metrics?agg=sum&get="
                                        + "capping.held,capping.released,capping.heldNow,"
                                        + "capping.preempted,capping.cancelled,"
                                        + "capping.preferencesApplied,capping.receiptsApplied,"
                                        + "capping.fatigued,capping.engagements,"
                                        + "capping.lifetimeRejected";
                    }
                }
                if (metrics == null) {
                    return Counts.UNKNOWN;
                }
            }
            Map<String, Long> sums = new HashMap<>();
            for (JsonNode m : get(metrics)) {
                sums.put(m.path("id").asText(), m.path("sum").asLong(-1));
            }
            return new Counts(sums);
        } catch (Exception e) {
            return Counts.UNKNOWN; // the job restarting, or its tasks not yet running
        }
    }

    private JsonNode get(String url) throws Exception {
        HttpResponse<String> r =
                http.send(
                        HttpRequest.newBuilder(URI.create(url))
                                .timeout(Duration.ofSeconds(5))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(r.body());
    }
}
