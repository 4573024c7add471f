package io.freqcap.operators.mirror;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One lettuce connection to a single Redis ({@code redis://}, {@code rediss://}) or a Redis Cluster
 * ({@code redis-cluster://h1:p1,h2:p2,...}), with the few calls the mirror makes. Commands are not
 * flushed one by one: callers queue many and {@link #flush()} sends them together (in a cluster,
 * one batch per node). While disconnected, commands fail at once instead of queueing without bound:
 * the mirror keeps its own bounded backlog and retries.
 */
public final class RedisConnection implements AutoCloseable {
    /**
     * A write Redis has not answered by then failed (and is retried, or dropped): well under a
     * second, so a stalled Redis is noticed at once; a healthy one answers a flush in milliseconds.
     */
    static final Duration COMMAND_TIMEOUT = Duration.ofMillis(750);

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

    private final AbstractRedisClient client;
    private final ClientResources resources;
    private final StatefulConnection<String, String> connection;
    private final RedisScriptingAsyncCommands<String, String> commands;
    private final boolean cluster;

    private RedisConnection(
            AbstractRedisClient client,
            ClientResources resources,
            StatefulConnection<String, String> connection,
            RedisScriptingAsyncCommands<String, String> commands,
            boolean cluster) {
        this.client = client;
        this.resources = resources;
        this.connection = connection;
        this.commands = commands;
        this.cluster = cluster;
    }

    /** The uris of a mirror address, checked; throws with a one-line reason. */
    public static List<RedisURI> parse(String uri) {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("empty Redis uri");
        }
        if (uri.startsWith("redis-cluster://")) {
            List<RedisURI> nodes = new ArrayList<>();
            for (String hostPort : uri.substring("redis-cluster://".length()).split(",")) {
                if (!hostPort.matches("[^:/]+:\\d+")) {
                    throw new IllegalArgumentException(
                            "redis-cluster:// expects host:port,host:port,... but got \""
                                    + hostPort
                                    + "\"");
                }
                nodes.add(RedisURI.create("redis://" + hostPort));
            }
            return nodes;
        }
        if (!uri.startsWith("redis://") && !uri.startsWith("rediss://")) {
            throw new IllegalArgumentException(
                    "expected redis://host:port, rediss://host:port or"
                            + " redis-cluster://host:port,... but got \""
                            + uri
                            + "\"");
        }
        try {
            return List.of(RedisURI.create(uri));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("bad Redis uri \"" + uri + "\": " + e.getMessage());
        }
    }

    public static boolean isCluster(String uri) {
        return uri.startsWith("redis-cluster://");
    }

    /** Connects without blocking the caller; the future fails if Redis cannot be reached. */
    public static CompletableFuture<RedisConnection> connect(String uri) {
        List<RedisURI> uris = parse(uri);
        uris.forEach(u -> u.setTimeout(COMMAND_TIMEOUT));
        SocketOptions socket = SocketOptions.builder().connectTimeout(CONNECT_TIMEOUT).build();
        TimeoutOptions timeouts = TimeoutOptions.enabled(COMMAND_TIMEOUT);
        // Reconnect within 2 s of Redis coming back (lettuce's default waits up to 30 s).
        ClientResources resources =
                DefaultClientResources.builder()
                        .reconnectDelay(
                                Delay.exponential(
                                        Duration.ofMillis(100),
                                        Duration.ofSeconds(2),
                                        2,
                                        TimeUnit.MILLISECONDS))
                        .build();
        if (isCluster(uri)) {
            RedisClusterClient client = RedisClusterClient.create(resources, uris);
            client.setOptions(
                    ClusterClientOptions.builder()
                            .socketOptions(socket)
                            .timeoutOptions(timeouts)
                            .disconnectedBehavior(
                                    ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                            .build());
            // The cluster client needs the topology before it connects; adaptive refresh follows
            // failovers and slot moves (MOVED/ASK answers, reconnects).
            return opened(
                    client.refreshPartitionsAsync()
                            .toCompletableFuture()
                            .thenCompose(loaded -> client.connectAsync(StringCodec.UTF8))
                            .thenApply(c -> new Opened(c, c.async())),
                    client,
                    resources,
                    true);
        }
        RedisClient client = RedisClient.create(resources);
        client.setOptions(
                ClientOptions.builder()
                        .socketOptions(socket)
                        .timeoutOptions(timeouts)
                        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                        .build());
        return opened(
                client.connectAsync(StringCodec.UTF8, uris.get(0))
                        .toCompletableFuture()
                        .thenApply(c -> new Opened(c, c.async())),
                client,
                resources,
                false);
    }

    private record Opened(
            StatefulConnection<String, String> connection,
            RedisScriptingAsyncCommands<String, String> commands) {}

    /** The connection once open, set to send only on flush; the client freed if it never opens. */
    private static CompletableFuture<RedisConnection> opened(
            CompletableFuture<Opened> opening,
            AbstractRedisClient client,
            ClientResources resources,
            boolean cluster) {
        return opening.handle(
                (o, e) -> {
                    if (e != null) {
                        shutdown(client, resources);
                        throw new IllegalStateException(e);
                    }
                    o.connection().setAutoFlushCommands(false);
                    return new RedisConnection(
                            client, resources, o.connection(), o.commands(), cluster);
                });
    }

    /** Queues commands; nothing is sent before {@link #flush()}. */
    public RedisScriptingAsyncCommands<String, String> commands() {
        return commands;
    }

    public void flush() {
        connection.flushCommands();
    }

    public boolean isCluster() {
        return cluster;
    }

    @Override
    public void close() {
        shutdown(client, resources); // closes the connection too
    }

    private static void shutdown(AbstractRedisClient client, ClientResources resources) {
        client.shutdownAsync(0, 2, TimeUnit.SECONDS)
                .whenComplete((ok, e) -> resources.shutdown(0, 2, TimeUnit.SECONDS));
    }
}
