package io.freqcap.job.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The calls of Flink's REST API that watching and stopping freqcap on a cluster takes: trigger a
 * savepoint, stop with one, read the job's state, its exceptions and the cluster's overview.
 * (Submitting is {@link JobSubmission}'s.) Errors carry the cluster's own message.
 */
public final class FlinkRest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String base;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    public FlinkRest(String base) {
        this.base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
    }

    /** The job's state (RUNNING, RESTARTING, FINISHED, ...). */
    public String state(String jobId) throws IOException, InterruptedException {
        return get("/jobs/" + jobId).path("state").asText();
    }

    /** The job's details: its vertices with their parallelism and state. */
    public JsonNode job(String jobId) throws IOException, InterruptedException {
        return get("/jobs/" + jobId);
    }

    /** The cluster's overview: TaskManagers, slots, jobs by state. */
    public JsonNode overview() throws IOException, InterruptedException {
        return get("/overview");
    }

    /** The job's root exception and its history, as the web UI's Exceptions tab shows them. */
    public JsonNode exceptions(String jobId) throws IOException, InterruptedException {
        return get("/jobs/" + jobId + "/exceptions");
    }

    /** Takes a savepoint of a running job; returns its path once complete. */
    public String savepoint(String jobId, String dir, Duration timeout)
            throws IOException, InterruptedException {
        return savepointBy(
                "/savepoints", jobId, request("target-directory", dir, "cancel-job"), timeout);
    }

    /** Stops a job with a savepoint (sources stop first, sinks commit); returns its path. */
    public String stopWithSavepoint(String jobId, String dir, Duration timeout)
            throws IOException, InterruptedException {
        return savepointBy("/stop", jobId, request("targetDirectory", dir, "drain"), timeout);
    }

    /** A savepoint request: the directory under {@code dirField} when given, {@code flag} false. */
    private static ObjectNode request(String dirField, String dir, String flag) {
        ObjectNode req = JSON.createObjectNode();
        if (dir != null) {
            req.put(dirField, dir);
        }
        return req.put(flag, false);
    }

    /** Triggers a savepoint at {@code /jobs/<id><path>}; returns its path once complete. */
    private String savepointBy(String path, String jobId, ObjectNode req, Duration timeout)
            throws IOException, InterruptedException {
        String trigger = post("/jobs/" + jobId + path, req, timeout).path("request-id").asText();
        return awaitSavepoint(jobId, trigger, timeout);
    }

    private String awaitSavepoint(String jobId, String trigger, Duration timeout)
            throws IOException, InterruptedException {
        if (trigger.isEmpty()) {
            throw new IOException("savepoint of " + jobId + " not triggered");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            JsonNode r = get("/jobs/" + jobId + "/savepoints/" + trigger);
            if (r.path("status").path("id").asText().equals("COMPLETED")) {
                JsonNode op = r.path("operation");
                if (op.has("location")) {
                    return op.get("location").asText();
                }
                throw new IOException(
                        "savepoint of "
                                + jobId
                                + " failed: "
                                + op.path("failure-cause")
                                        .path("stack-trace")
                                        .asText(op.toString()));
            }
            Thread.sleep(200);
        }
        throw new IOException("savepoint of " + jobId + " not complete after " + timeout);
    }

    /** Cancels a job. */
    public void cancel(String jobId) throws IOException, InterruptedException {
        send(
                HttpRequest.newBuilder(URI.create(base + "/jobs/" + jobId + "?mode=cancel"))
                        .method("PATCH", HttpRequest.BodyPublishers.noBody()),
                Duration.ofSeconds(30));
    }

    JsonNode get(String path) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(URI.create(base + path)).GET(), Duration.ofSeconds(30));
    }

    private JsonNode post(String path, JsonNode body, Duration timeout)
            throws IOException, InterruptedException {
        return send(
                HttpRequest.newBuilder(URI.create(base + path))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))),
                timeout);
    }

    private JsonNode send(HttpRequest.Builder req, Duration timeout)
            throws IOException, InterruptedException {
        HttpResponse<String> r =
                http.send(req.timeout(timeout).build(), HttpResponse.BodyHandlers.ofString());
        JsonNode body = r.body().isBlank() ? JSON.createObjectNode() : JSON.readTree(r.body());
        if (r.statusCode() >= 300) {
            throw new IOException(
                    r.request().method()
                            + " "
                            + r.request().uri()
                            + ": HTTP "
                            + r.statusCode()
                            + " "
                            + body.path("errors").toString());
        }
        return body;
    }
}
