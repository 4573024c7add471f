package io.freqcap.job.local;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A real {@code redis-server} process on a free loopback port, for the local runner and the tests:
 * the {@code redis-server} on the PATH if there is one, else the binary shipped in the {@code
 * com.github.codemonstur:embedded-redis} artifact (Redis 6.2). Never used by the job jar.
 *
 * <p>{@link #kill()} and {@link #start()} stop it hard and start it again on the same port and
 * directory: with {@code persistent} it keeps its data (AOF, fsync on every write, so whatever it
 * acknowledged survives), without it comes back empty.
 */
public final class EmbeddedRedis implements AutoCloseable {
    private final Path dir;
    private final int port;
    private final boolean persistent;
    private final List<String> extraArgs;
    private final Secured secured;
    private Process process;

    /**
     * A server that asks for credentials and, with {@code tls}, speaks only TLS.
     *
     * @param user an ACL user allowed everything (the default user is then off), or {@code default}
     *     for a plain {@code requirepass}
     * @param tls the server's certificate and key (PEM) and a socket factory that trusts it, or
     *     null for plain TCP
     */
    public record Secured(String user, String password, Tls tls) {}

    /** A TLS server's files and how a client trusts it. */
    public record Tls(Path certificate, Path key, javax.net.ssl.SSLSocketFactory client) {}

    private EmbeddedRedis(Path dir, int port, boolean persistent, List<String> extraArgs) {
        this(dir, port, persistent, extraArgs, null);
    }

    private EmbeddedRedis(
            Path dir, int port, boolean persistent, List<String> extraArgs, Secured secured) {
        this.dir = dir;
        this.port = port;
        this.persistent = persistent;
        this.extraArgs = extraArgs;
        this.secured = secured;
    }

    /** Starts a standalone server that asks for credentials (and TLS, if given). */
    public static EmbeddedRedis start(Path dir, boolean persistent, Secured secured)
            throws IOException {
        List<String> args = new ArrayList<>();
        if (secured.user().equals("default")) {
            args.addAll(List.of("--requirepass", secured.password()));
        } else {
            args.addAll(
                    List.of(
                            "--user",
                            "default",
                            "off",
                            "--user",
                            secured.user(),
                            "on",
                            ">" + secured.password(),
                            "~*",
                            "&*",
                            "+@all"));
        }
        int port = freePort();
        if (secured.tls() != null) {
            args.addAll(
                    List.of(
                            "--tls-port",
                            Integer.toString(port),
                            "--tls-cert-file",
                            secured.tls().certificate().toString(),
                            "--tls-key-file",
                            secured.tls().key().toString(),
                            "--tls-ca-cert-file",
                            secured.tls().certificate().toString(),
                            "--tls-auth-clients",
                            "no"));
        }
        EmbeddedRedis r = new EmbeddedRedis(dir, port, persistent, args, secured);
        r.start();
        return r;
    }

    /** Starts a standalone server. */
    public static EmbeddedRedis start(Path dir, boolean persistent) throws IOException {
        EmbeddedRedis r = new EmbeddedRedis(dir, freePort(), persistent, List.of());
        r.start();
        return r;
    }

    /** Starts a cluster-enabled server without slots (see {@link EmbeddedRedisCluster}). */
    public static EmbeddedRedis startClusterNode(Path dir) throws IOException {
        int port = freePort();
        while (port + 10_000 > 65_535) { // the cluster bus listens on port + 10000
            port = freePort();
        }
        EmbeddedRedis r =
                new EmbeddedRedis(
                        dir,
                        port,
                        false,
                        List.of(
                                "--cluster-enabled",
                                "yes",
                                "--cluster-config-file",
                                "nodes-" + port + ".conf",
                                "--cluster-node-timeout",
                                "5000"));
        r.start();
        return r;
    }

    public int port() {
        return port;
    }

    /** Its address, with the ACL user's name (never the password) when it has one. */
    public String uri() {
        String user =
                secured == null || secured.user().equals("default") ? "" : secured.user() + "@";
        return secured != null && secured.tls() != null
                ? "rediss://" + user + "localhost:" + port
                : "redis://" + user + "127.0.0.1:" + port;
    }

    /** Starts (or starts again) the server and waits until it answers PING. */
    public synchronized void start() throws IOException {
        if (process != null && process.isAlive()) {
            return;
        }
        Files.createDirectories(dir);
        List<String> cmd = new ArrayList<>();
        cmd.add(binary().toString());
        cmd.addAll(
                List.of(
                        "--port",
                        secured != null && secured.tls() != null ? "0" : Integer.toString(port),
                        "--bind",
                        "127.0.0.1",
                        "--dir",
                        dir.toString(),
                        "--save",
                        "",
                        "--appendonly",
                        persistent ? "yes" : "no",
                        "--appendfsync",
                        "always",
                        "--protected-mode",
                        secured != null ? "yes" : "no",
                        "--daemonize",
                        "no"));
        cmd.addAll(extraArgs);
        process =
                new ProcessBuilder(cmd)
                        .redirectErrorStream(true)
                        .redirectOutput(
                                ProcessBuilder.Redirect.appendTo(
                                        dir.resolve("redis-" + port + ".log").toFile()))
                        .start();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!"+PONG".equals(command("PING"))) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new IOException(
                        "redis-server did not start on port "
                                + port
                                + "; see "
                                + dir.resolve("redis-" + port + ".log"));
            }
            sleep(20);
        }
    }

    /** Freezes the server (SIGSTOP): connections stay open, nothing is answered. */
    public synchronized void pause() throws IOException, InterruptedException {
        signal("-STOP");
    }

    /** Lets a paused server go on (SIGCONT). */
    public synchronized void resume() throws IOException, InterruptedException {
        signal("-CONT");
    }

    private void signal(String signal) throws IOException, InterruptedException {
        if (process == null) {
            throw new IllegalStateException("redis-server is not running");
        }
        Signals.send(process, signal);
    }

    /** Stops the server at once (SIGKILL), as a crash would. */
    public synchronized void kill() throws InterruptedException {
        if (process != null) {
            process.destroyForcibly();
            process.waitFor();
            process = null;
        }
    }

    @Override
    public void close() throws InterruptedException {
        kill();
    }

    /**
     * Sends one inline command and returns the first line of the answer, or null when the server
     * cannot be reached. Enough for PING and CLUSTER INFO checks without a client library.
     */
    public String command(String inline) {
        try (Socket plain = new Socket()) {
            plain.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            Socket s =
                    secured != null && secured.tls() != null
                            ? secured.tls().client().createSocket(plain, "localhost", port, true)
                            : plain;
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            if (secured != null) {
                out.write(
                        ("AUTH " + secured.user() + " " + secured.password() + "\r\n")
                                .getBytes(StandardCharsets.UTF_8));
                out.flush();
                int c;
                while ((c = in.read()) >= 0 && c != '\n') {
                    // skip +OK (or the error, which the command's answer repeats)
                }
            }
            out.write((inline + "\r\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            StringBuilder sb = new StringBuilder();
            int b;
            while ((b = in.read()) >= 0 && b != '\n') {
                if (b != '\r') {
                    sb.append((char) b);
                }
            }
            if (sb.length() > 0 && sb.charAt(0) == '$') {
                int len = Integer.parseInt(sb.substring(1));
                byte[] body = in.readNBytes(Math.max(len, 0));
                return new String(body, StandardCharsets.UTF_8);
            }
            return sb.toString();
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static Path binary;

    /** redis-server from the PATH, else extracted once per JVM from the embedded-redis jar. */
    static synchronized Path binary() throws IOException {
        if (binary != null) {
            return binary;
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(File.pathSeparator)) {
                Path p = Path.of(d, "redis-server");
                if (Files.isExecutable(p)) {
                    return binary = p;
                }
            }
        }
        String resource = shippedBinaryName();
        TempDirs.deleteLeftByKilledRuns(
                "freqcap-redis", new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
        Path tmp = TempDirs.createOwned("freqcap-redis");
        // deleteOnExit deletes in reverse order: the files first, then their directory.
        tmp.toFile().deleteOnExit();
        tmp.resolve("pid").toFile().deleteOnExit();
        Path target = tmp.resolve("redis-server");
        try (InputStream in = EmbeddedRedis.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException(
                        "no redis-server on the PATH and "
                                + resource
                                + " not on the classpath (the embedded-redis artifact)");
            }
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        }
        target.toFile().deleteOnExit();
        if (!target.toFile().setExecutable(true)) {
            throw new IOException("cannot make " + target + " executable");
        }
        return binary = target;
    }

    private static String shippedBinaryName() throws IOException {
        String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        boolean arm = arch.contains("aarch64") || arch.contains("arm64");
        if (os.contains("linux")) {
            return arm ? "redis-server-6.2.7-linux-arm64" : "redis-server-6.2.6-v5-linux-amd64";
        }
        if (os.contains("mac")) {
            return arm
                    ? "redis-server-6.2.6-v5-darwin-arm64"
                    : "redis-server-6.2.6-v5-darwin-amd64";
        }
        throw new IOException(
                "no redis-server on the PATH, and none shipped for " + os + "/" + arch);
    }

    private static void sleep(long millis) throws IOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /** The embedded Redis' password file: made once per state dir, readable by its owner only. */
    static Path passwordFile(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path file = dir.resolve("password");
        if (!Files.exists(file)) {
            byte[] random = new byte[24];
            new java.security.SecureRandom().nextBytes(random);
            Files.writeString(
                    file,
                    java.util.HexFormat.of().formatHex(random) + "\n",
                    java.nio.file.StandardOpenOption.CREATE_NEW);
            try {
                Files.setPosixFilePermissions(
                        file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException notPosix) {
                // a file system without POSIX permissions: the state dir's own protection
            }
        }
        return file;
    }
}
