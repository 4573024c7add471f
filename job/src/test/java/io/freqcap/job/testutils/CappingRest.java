package io.freqcap.job.testutils;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.common.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.test.junit5.MiniClusterExtension;

/** The capping tasks' metrics of a job, as a MiniCluster's REST API serves them. */
public final class CappingRest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private CappingRest() {}

    /** The URL of the capping vertex's subtask metrics (append {@code ?agg=sum&get=...}). */
    public static String metrics(MiniClusterExtension flink, JobClient job) throws Exception {
        var client = flink.getClientConfiguration();
        String base =
                "http://"
                        + client.get(RestOptions.ADDRESS)
                        + ":"
                        + client.get(RestOptions.PORT)
                        + "/jobs/"
                        + job.getJobID();
        for (JsonNode v : get(base).path("vertices")) {
            if (v.path("name").asText().contains("capping")) {
                return base + "/vertices/" + v.path("id").asText() + "/subtasks/metrics";
            }
        }
        throw new AssertionError("no capping vertex in " + base);
    }

    /** The capping counters {@code capping.<name>} summed over the tasks and the names. */
    public static long sum(MiniClusterExtension flink, JobClient job, String... names)
            throws Exception {
        StringBuilder ids = new StringBuilder();
        for (String n : names) {
            ids.append(ids.length() == 0 ? "" : ",").append("capping.").append(n);
        }
        long sum = 0;
        for (JsonNode m : get(metrics(flink, job) + "?agg=sum&get=" + ids)) {
            sum += m.path("sum").asLong();
        }
        return sum;
    }

    public static JsonNode get(String url) throws Exception {
        return Json.MAPPER.readTree(
                HTTP.send(
                                HttpRequest.newBuilder(URI.create(url)).build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body());
    }
}
