package io.freqcap.operators.mirror;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import io.lettuce.core.api.async.RedisKeyAsyncCommands;
import io.lettuce.core.api.async.RedisStringAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
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
 * ({@code redis-cluster://h1:p1,h2:p2,...}), with the few kinds of calls the mirror makes. Commands
 * are not flushed one by one: callers queue many and {@link #flush()} sends them together (in a
 * cluster, one batch per node). While disconnected, commands fail at once instead of queueing
 * without bound: the mirror keeps its own bounded backlog and retries.
 */
public final class RedisConnection implements AutoCloseable {
    /**
     * A write Redis has not answered by then failed (and is retried, or dropped): well under a
     * second, so a stalled Redis is noticed at once; a healthy one answers a flush in milliseconds.
     */
    static final Duration COMMAND_TIMEOUT = Duration.ofMillis(750);

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

    /** Keys are text, values (the users' logs) the bytes the capping task encoded. */
    static final RedisCodec<String, byte[]> CODEC =
            RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);

    private final AbstractRedisClient client;
    private final ClientResources resources;
    private final Opened opened;
    private final boolean cluster;

    private RedisConnection(
            AbstractRedisClient client, ClientResources resources, Opened opened, boolean cluster) {
        this.client = client;
        this.resources = resources;
        this.opened = opened;
        this.cluster = cluster;
    }

    /** The uris of a mirror address, checked; throws with a one-line reason. */
    public static List<RedisURI> parse(String uri) {
        return parse(uri, null);
    }

    /**
     * The uris of a mirror address, checked: {@code redis://[user:password@]host:port}, {@code
     * rediss://...} (TLS), {@code redis-cluster://[user:password@]h1:p1,h2:p2,...} or {@code
     * rediss-cluster://...} (TLS). Error texts never quote a password.
     *
     * @param password the password from {@code --redis-password-file}, used with the uri's user
     *     name (an ACL user) or alone; null: the uri's own credentials, if any
     */
    public static List<RedisURI> parse(String uri, char[] password) {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("empty Redis uri");
        }
        List<RedisURI> out = new ArrayList<>();
        if (isCluster(uri)) {
            boolean tls = uri.startsWith("rediss-cluster://");
            String rest = uri.substring(uri.indexOf("://") + 3);
            String userInfo = null;
            int at = rest.lastIndexOf('@');
            if (at >= 0) {
                userInfo = rest.substring(0, at);
                rest = rest.substring(at + 1);
            }
            for (String hostPort : rest.split(",")) {
                if (!hostPort.matches("[^:/@]+:\\d+")) {
                    throw new IllegalArgumentException(
                            "redis-cluster:// expects host:port,host:port,... but got \""
                                    + hostPort
                                    + "\"");
                }
                out.add(
                        withUser(
                                RedisURI.create((tls ? "rediss://" : "redis://") + hostPort),
                                userInfo));
            }
        } else {
            if (!uri.startsWith("redis://") && !uri.startsWith("rediss://")) {
                throw new IllegalArgumentException(
                        "expected redis://host:port, rediss://host:port,"
                                + " redis-cluster://host:port,... or rediss-cluster://... but got"
                                + " \""
                                + redact(uri)
                                + "\"");
            }
            try {
                String scheme = uri.substring(0, uri.indexOf("://") + 3);
                String rest = uri.substring(scheme.length());
                // The user info ends at the last '@': a host never has one, and a password may
                // (or a '/', which RFC 3986 asks to percent-encode, but people do not).
                int at = rest.lastIndexOf('@');
                String userInfo = at < 0 ? null : rest.substring(0, at);
                out.add(withUser(RedisURI.create(scheme + rest.substring(at + 1)), userInfo));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("bad Redis uri \"" + redact(uri) + "\"");
            }
        }
        if (password != null) {
            for (RedisURI u : out) {
                u.setPassword(password); // with the uri's user name, if any: an ACL user
            }
        }
        return out;
    }

    /**
     * Credentials of a uri's user info, as the redis uri scheme has them: {@code user:password},
     * {@code :password} (the default user) or {@code user} alone (an ACL user whose password comes
     * from {@code --redis-password-file}).
     */
    private static RedisURI withUser(RedisURI u, String userInfo) {
        if (userInfo == null || userInfo.isEmpty()) {
            return u;
        }
        int colon = userInfo.indexOf(':');
        String user = colon < 0 ? userInfo : userInfo.substring(0, colon);
        if (!user.isEmpty()) {
            u.setUsername(percentDecoded(user));
        }
        if (colon >= 0) {
            u.setPassword(percentDecoded(userInfo.substring(colon + 1)).toCharArray());
        }
        return u;
    }

    /**
     * RFC 3986 percent-decoding, as a uri's user info asks: {@code %XX} is the byte XX (UTF-8
     * together), everything else is itself, a {@code +} included (form encoding's space for a
     * {@code +} made every password with one fail), and a {@code %} not followed by two hex digits
     * is a plain {@code %}.
     */
    static String percentDecoded(String s) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(s.length());
        byte[] utf8 = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        for (int i = 0; i < utf8.length; i++) {
            int hi = i + 2 < utf8.length ? Character.digit(utf8[i + 1], 16) : -1;
            int lo = i + 2 < utf8.length ? Character.digit(utf8[i + 2], 16) : -1;
            if (utf8[i] == '%' && hi >= 0 && lo >= 0) {
                out.write(hi << 4 | lo);
                i += 2;
            } else {
                out.write(utf8[i]);
            }
        }
        return out.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    public static boolean isCluster(String uri) {
        return uri.startsWith("redis-cluster://") || uri.startsWith("rediss-cluster://");
    }

    /**
     * The uri as it may be shown (logs, errors, the local runner): everything between the scheme
     * and the last {@code @} but the user name is {@code ***}, whatever characters a password holds
     * ({@code /}, {@code @}, {@code :}, {@code +}, {@code %}, raw or percent-encoded).
     */
    public static String redact(String uri) {
        if (uri == null) {
            return null;
        }
        int scheme = uri.indexOf("://");
        int at = uri.lastIndexOf('@');
        if (at < 0) {
            return uri;
        }
        int start = scheme < 0 || scheme > at ? 0 : scheme + 3;
        String userInfo = uri.substring(start, at);
        int colon = userInfo.indexOf(':');
        String user = colon < 0 ? userInfo : userInfo.substring(0, colon);
        return uri.substring(0, start) + user + ":***@" + uri.substring(at + 1);
    }

    /**
     * The password in {@code --redis-password-file}: the file's content without its final line
     * break.
     */
    public static char[] readPassword(String file) {
        try {
            String s = java.nio.file.Files.readString(java.nio.file.Path.of(file));
            s = s.endsWith("\r\n") ? s.substring(0, s.length() - 2) : s;
            s = s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
            if (s.isEmpty()) {
                throw new IllegalArgumentException("the Redis password file " + file + " is empty");
            }
            return s.toCharArray();
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(
                    "cannot read the Redis password file "
                            + file
                            + ": "
                            + e.getClass().getSimpleName());
        }
    }

    /** Connects without blocking the caller; the future fails if Redis cannot be reached. */
    public static CompletableFuture<RedisConnection> connect(String uri) {
        return connect(uri, null);
    }

    /**
     * Connects without blocking the caller; the future fails if Redis cannot be reached.
     *
     * @param passwordFile {@code --redis-password-file}, read here (on the TaskManager), or null
     */
    public static CompletableFuture<RedisConnection> connect(String uri, String passwordFile) {
        List<RedisURI> uris = parse(uri, passwordFile == null ? null : readPassword(passwordFile));
        uris.forEach(u -> u.setTimeout(COMMAND_TIMEOUT));
        SocketOptions socket = SocketOptions.builder().connectTimeout(CONNECT_TIMEOUT).build();
        // A time-out per command, but for the mirror's writes: a timer each would cost the job
        // more than the write, and the writer times out a batch as a whole (RedisChannel).
        TimeoutOptions timeouts =
                TimeoutOptions.builder()
                        .timeoutSource(
                                new TimeoutOptions.TimeoutSource() {
                                    @Override
                                    public long getTimeout(
                                            io.lettuce.core.protocol.RedisCommand<?, ?, ?> c) {
                                        return c instanceof MirrorCommand
                                                ? 0
                                                : COMMAND_TIMEOUT.toMillis();
                                    }
                                })
                        .build();
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
                            .thenCompose(loaded -> client.connectAsync(CODEC))
                            .thenApply(c -> new Opened(c, c.async(), c.async(), c.async())),
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
                client.connectAsync(CODEC, uris.get(0))
                        .toCompletableFuture()
                        .thenApply(c -> new Opened(c, c.async(), c.async(), c.async())),
                client,
                resources,
                false);
    }

    private record Opened(
            StatefulConnection<String, byte[]> connection,
            BaseRedisAsyncCommands<String, byte[]> commands,
            RedisStringAsyncCommands<String, byte[]> strings,
            RedisKeyAsyncCommands<String, byte[]> keys) {}

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
                    return new RedisConnection(client, resources, o, cluster);
                });
    }

    /** Queues commands ({@code PING}); nothing is sent before {@link #flush()}. */
    public BaseRedisAsyncCommands<String, byte[]> commands() {
        return opened.commands();
    }

    /** Queues string commands ({@code SET}) on the same connection, in order with the others. */
    public RedisStringAsyncCommands<String, byte[]> strings() {
        return opened.strings();
    }

    /** Queues key commands ({@code DEL}) on the same connection, in order with the others. */
    public RedisKeyAsyncCommands<String, byte[]> keys() {
        return opened.keys();
    }

    public void flush() {
        opened.connection().flushCommands();
    }

    /** Queues the commands of a batch at once (in a cluster, each to its slot's node). */
    void dispatch(List<MirrorCommand> commands) {
        opened.connection().dispatch(commands);
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
