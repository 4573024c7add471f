package io.freqcap.job.testutils;

import io.freqcap.job.local.EmbeddedRedis;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A Redis Cluster of {@code masters} real {@code redis-server} processes on loopback ports, the
 * 16384 slots split evenly, no replicas. For the tests.
 */
public final class EmbeddedRedisCluster implements AutoCloseable {
    private final List<EmbeddedRedis> nodes;

    private EmbeddedRedisCluster(List<EmbeddedRedis> nodes) {
        this.nodes = nodes;
    }

    public static EmbeddedRedisCluster start(Path dir, int masters) throws IOException {
        List<EmbeddedRedis> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < masters; i++) {
                nodes.add(EmbeddedRedis.startClusterNode(dir.resolve("node-" + i)));
            }
            for (int i = 0; i < masters; i++) {
                int from = 16384 * i / masters;
                int to = 16384 * (i + 1) / masters - 1;
                StringBuilder cmd = new StringBuilder("CLUSTER ADDSLOTS");
                for (int s = from; s <= to; s++) {
                    cmd.append(' ').append(s);
                }
                expectOk(nodes.get(i), cmd.toString());
            }
            for (int i = 1; i < masters; i++) {
                expectOk(nodes.get(i), "CLUSTER MEET 127.0.0.1 " + nodes.get(0).port());
            }
            long deadline = System.nanoTime() + 30_000_000_000L;
            for (EmbeddedRedis n : nodes) {
                while (true) {
                    String info = n.command("CLUSTER INFO");
                    if (info != null
                            && info.contains("cluster_state:ok")
                            && info.contains("cluster_known_nodes:" + masters)) {
                        break;
                    }
                    if (System.nanoTime() > deadline) {
                        throw new IOException("Redis cluster not ready: " + info);
                    }
                    Thread.sleep(50);
                }
            }
            return new EmbeddedRedisCluster(nodes);
        } catch (IOException | InterruptedException | RuntimeException e) {
            for (EmbeddedRedis n : nodes) {
                try {
                    n.close();
                } catch (InterruptedException ignored) {
                    Thread.currentThread().interrupt();
                }
            }
            throw e instanceof IOException io ? io : new IOException(e);
        }
    }

    private static void expectOk(EmbeddedRedis node, String cmd) throws IOException {
        String answer = node.command(cmd);
        if (!"+OK".equals(answer)) {
            throw new IOException("Redis cluster setup: " + cmd.split(" ")[1] + " -> " + answer);
        }
    }

    public List<EmbeddedRedis> nodes() {
        return nodes;
    }

    /** {@code redis-cluster://127.0.0.1:p1,127.0.0.1:p2,...} */
    public String uri() {
        return "redis-cluster://"
                + nodes.stream().map(n -> "127.0.0.1:" + n.port()).collect(Collectors.joining(","));
    }

    @Override
    public void close() throws InterruptedException {
        for (EmbeddedRedis n : nodes) {
            n.close();
        }
    }
}
