package io.freqcap.job.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The capping tasks' held-message counters ({@code held}, {@code released}, {@code heldNow}, summed
 * over tasks), those of preferences and receipts applied, and of fatigue (messages decided under a
 * lowered cap, engagements), read from the local Flink's REST API for the progress line: held
 * messages wait in the job's state, so the output topics cannot tell how many there are.
 */
final class HeldProgress {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Summed over the capping tasks; -1 where not known (yet). */
    record Counts(
            long held,
            long released,
            long waiting,
            long preempted,
            long cancelled,
            long preferences,
            long uncounted,
            long fatigued,
            long engagements) {
        static final Counts UNKNOWN = new Counts(-1, -1, -1, -1, -1, -1, -1, -1, -1);
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
                                        + "capping.fatigued,capping.engagements";
                    }
                }
                if (metrics == null) {
                    return Counts.UNKNOWN;
                }
            }
            long held = -1;
            long released = -1;
            long waiting = -1;
            long preempted = -1;
            long cancelled = -1;
            long preferences = -1;
            long uncounted = -1;
            long fatigued = -1;
            long engagements = -1;
            for (JsonNode m : get(metrics)) {
                long sum = m.path("sum").asLong(-1);
                switch (m.path("id").asText()) {
                    case "capping.held" -> held = sum;
                    case "capping.released" -> released = sum;
                    case "capping.heldNow" -> waiting = sum;
                    case "capping.preempted" -> preempted = sum;
                    case "capping.cancelled" -> cancelled = sum;
                    case "capping.preferencesApplied" -> preferences = sum;
                    case "capping.receiptsApplied" -> uncounted = sum;
                    case "capping.fatigued" -> fatigued = sum;
                    case "capping.engagements" -> engagements = sum;
                    default -> {}
                }
            }
            return new Counts(
                    held,
                    released,
                    waiting,
                    preempted,
                    cancelled,
                    preferences,
                    uncounted,
                    fatigued,
                    engagements);
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
