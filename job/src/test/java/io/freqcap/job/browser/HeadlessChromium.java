package io.freqcap.job.browser;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.schema.common.Json;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Debian's headless {@code chromium}, driven over the Chrome DevTools Protocol (a WebSocket, with
 * the JDK's own client): navigate, run JavaScript in the page, take a screenshot. For tests that
 * look at the Flink web UI as a user does.
 */
public final class HeadlessChromium implements AutoCloseable {
    private final Process process;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

    private HeadlessChromium(Process process, WebSocket socket) {
        this.process = process;
        this.socket = socket;
    }

    /** The chromium binary on this machine, or null. */
    public static String binary() {
        for (String b : new String[] {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
            if (new File(b).canExecute()) {
                return b;
            }
        }
        return null;
    }

    public static HeadlessChromium start(String binary, Path profile) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        ProcessBuilder pb =
                new ProcessBuilder(
                                binary,
                                "--headless=new",
                                "--no-sandbox",
                                "--disable-gpu",
                                "--window-size=1600,1000",
                                "--remote-debugging-port=" + port,
                                "--user-data-dir=" + profile,
                                "about:blank")
                        .redirectErrorStream(true)
                        .redirectOutput(profile.resolveSibling("chromium.log").toFile());
        // Chromium makes its own scratch dirs (org.chromium.Chromium.*) in TMPDIR and leaves them:
        // in the test's directory, they go with it.
        pb.environment().put("TMPDIR", profile.toAbsolutePath().getParent().toString());
        Process p = pb.start();
        HttpClient http = HttpClient.newHttpClient();
        String wsUrl = null;
        for (int i = 0; i < 100 && wsUrl == null; i++) {
            try {
                JsonNode pages =
                        Json.MAPPER.readTree(
                                http.send(
                                                HttpRequest.newBuilder(
                                                                URI.create(
                                                                        "http://127.0.0.1:"
                                                                                + port
                                                                                + "/json/list"))
                                                        .build(),
                                                HttpResponse.BodyHandlers.ofString())
                                        .body());
                for (JsonNode page : pages) {
                    if (page.path("type").asText().equals("page")) {
                        wsUrl = page.get("webSocketDebuggerUrl").asText();
                    }
                }
            } catch (IOException notYet) {
                // starting
            }
            if (wsUrl == null) {
                Thread.sleep(200);
            }
        }
        if (wsUrl == null) {
            p.destroyForcibly();
            throw new IllegalStateException("chromium did not open its debugging port");
        }
        HeadlessChromium[] self = new HeadlessChromium[1];
        StringBuilder partial = new StringBuilder();
        WebSocket ws =
                http.newWebSocketBuilder()
                        .buildAsync(
                                URI.create(wsUrl),
                                new WebSocket.Listener() {
                                    @Override
                                    public CompletionStage<?> onText(
                                            WebSocket w, CharSequence data, boolean last) {
                                        partial.append(data);
                                        if (last) {
                                            self[0].received(partial.toString());
                                            partial.setLength(0);
                                        }
                                        w.request(1);
                                        return null;
                                    }
                                })
                        .get(30, TimeUnit.SECONDS);
        self[0] = new HeadlessChromium(p, ws);
        return self[0];
    }

    private void received(String text) {
        try {
            JsonNode msg = Json.MAPPER.readTree(text);
            if (msg.has("id")) {
                CompletableFuture<JsonNode> f = pending.remove(msg.get("id").asInt());
                if (f != null) {
                    f.complete(msg);
                }
            }
        } catch (IOException e) {
            // not for us
        }
    }

    /** Sends one DevTools command and waits for its result. */
    public JsonNode send(String method, ObjectNode params) throws Exception {
        int id = ids.incrementAndGet();
        ObjectNode cmd = Json.MAPPER.createObjectNode();
        cmd.put("id", id);
        cmd.put("method", method);
        cmd.set("params", params);
        CompletableFuture<JsonNode> result = new CompletableFuture<>();
        pending.put(id, result);
        socket.sendText(Json.MAPPER.writeValueAsString(cmd), true).get(30, TimeUnit.SECONDS);
        JsonNode answer = result.get(60, TimeUnit.SECONDS);
        if (answer.has("error")) {
            throw new IllegalStateException(method + ": " + answer.get("error"));
        }
        return answer.get("result");
    }

    public void navigate(String url) throws Exception {
        send("Page.navigate", Json.MAPPER.createObjectNode().put("url", url));
    }

    /** Runs {@code js} in the page and returns its value (JSON-compatible). */
    public JsonNode evaluate(String js) throws Exception {
        JsonNode r =
                send(
                        "Runtime.evaluate",
                        Json.MAPPER
                                .createObjectNode()
                                .put("expression", js)
                                .put("returnByValue", true)
                                .put("awaitPromise", true));
        if (r.has("exceptionDetails")) {
            throw new IllegalStateException(js + ": " + r.get("exceptionDetails"));
        }
        return r.get("result").path("value");
    }

    /** Evaluates {@code js} until it is true. */
    public void await(String js, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!evaluate(js).asBoolean(false)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("page never showed: " + js);
            }
            Thread.sleep(250);
        }
    }

    public void screenshot(Path png) throws Exception {
        JsonNode r = send("Page.captureScreenshot", Json.MAPPER.createObjectNode());
        Files.write(png, Base64.getDecoder().decode(r.get("data").asText()));
    }

    @Override
    public void close() throws Exception {
        socket.abort();
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
