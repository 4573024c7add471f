package io.freqcap.job.bench;

import io.freqcap.job.local.TempDirs;
import io.freqcap.operators.segments.FlinkFileLoader;
import io.freqcap.operators.segments.SegmentTable;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.segment.SegmentBitmap;
import io.freqcap.schema.segment.SegmentUpdate;
import java.io.BufferedOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * Segment sizes, build time and resolution speed.
 *
 * <p>Run: {@code mvn -q -DskipTests install && mvn -q -pl job exec:exec@segments}
 */
public final class SegmentsBenchmark {
    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("freqcap-segments-bench");
        Random rnd = new Random(7);

        // 1. Dense: ids 0..300M, 90% members, as a text file built with `segments build`.
        try {
            if (!Boolean.getBoolean("bench.resolutionOnly")) {
                buildDenseAndSparse(dir, rnd);
            }
            resolution(dir, rnd);
        } finally {
            TempDirs.deleteRecursively(dir);
        }
        memoryLatency();
    }

    /**
     * What one read from main memory costs on this machine: the floor under any lookup whose data
     * is not in the CPU caches. A random cycle through 512 MB, followed one load at a time, then
     * eight cycles followed side by side (eight independent loads per step).
     */
    static void memoryLatency() {
        int n = 1 << 27;
        int[] next = new int[n];
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Random rnd = new Random(1);
        for (int i = n - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < n; i++) {
            next[order[i]] = order[(i + 1) % n];
        }
        order = null;
        int steps = 10_000_000;
        int p = 0;
        for (int i = 0; i < steps / 10; i++) {
            p = next[p];
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < steps; i++) {
            p = next[p];
        }
        double one = (System.nanoTime() - t0) / (double) steps;
        int[] q = {1, 2, 3, 4, 5, 6, 7, 8};
        int q0 = q[0], q1 = q[1], q2 = q[2], q3 = q[3], q4 = q[4], q5 = q[5], q6 = q[6], q7 = q[7];
        long t1 = System.nanoTime();
        for (int i = 0; i < steps / 8; i++) {
            q0 = next[q0];
            q1 = next[q1];
            q2 = next[q2];
            q3 = next[q3];
            q4 = next[q4];
            q5 = next[q5];
            q6 = next[q6];
            q7 = next[q7];
        }
        double eight = (System.nanoTime() - t1) / (double) (steps / 8);
        System.out.printf(
                "main memory, random reads over 512 MB: %.0f ns per dependent read, %.0f ns per"
                        + " group of 8 independent reads (%d)%n",
                one, eight, (p + q0 + q1 + q2 + q3 + q4 + q5 + q6 + q7) % 10);
    }

    static void buildDenseAndSparse(Path dir, Random rnd) throws Exception {
        Path text = dir.resolve("dense.txt");
        long members = 0;
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(text), 1 << 20)) {
            byte[] digits = new byte[24];
            for (long id = 0; id < 300_000_000L; id++) {
                if (rnd.nextInt(10) == 0) {
                    continue;
                }
                members++;
                int p = digits.length;
                digits[--p] = '\n';
                long v = id;
                do {
                    digits[--p] = (byte) ('0' + v % 10);
                    v /= 10;
                } while (v > 0);
                out.write(digits, p, digits.length - p);
            }
        }
        long t0 = System.nanoTime();
        SegmentBitmap dense = io.freqcap.job.tools.segments.SegmentsToolAccess.readIds(text);
        byte[] denseBytes = dense.write(SegmentBitmap.Format.ROARING32);
        double buildSeconds = (System.nanoTime() - t0) / 1e9;
        System.out.printf(
                "dense: %,d ids (text %,d MB) built in %.1f s -> %,d bytes (%.1f MB)%n",
                members,
                Files.size(text) >> 20,
                buildSeconds,
                denseBytes.length,
                denseBytes.length / 1e6);
        Files.delete(text);

        // 2. Sparse: 10M random ids under 2^32.
        SegmentBitmap.Builder sparseBuilder = new SegmentBitmap.Builder();
        for (int i = 0; i < 10_000_000; i++) {
            sparseBuilder.add(rnd.nextLong() & 0xFFFFFFFFL);
        }
        SegmentBitmap sparse = sparseBuilder.build();
        byte[] sparseBytes = sparse.write(SegmentBitmap.Format.ROARING32);
        System.out.printf(
                "sparse: %,d ids under 2^32 -> %,d bytes, %.2f bits/member%n",
                sparse.cardinality(),
                sparseBytes.length,
                8.0 * sparseBytes.length / sparse.cardinality());
    }

    static void resolution(Path dir, Random rnd) throws Exception {
        // 3. Resolution across 8 segments, all with rules, over users 0..300M.
        StringBuilder rules = new StringBuilder("{\"version\":1,\"rules\":[");
        SegmentTable table = new SegmentTable();
        for (int s = 0; s < 8; s++) {
            rules.append("{\"segment\":\"s")
                    .append(s)
                    .append("\",\"limits\":[{\"window\":\"1d\",\"max\":1}]},");
            SegmentBitmap.Builder b = new SegmentBitmap.Builder();
            int n = s < 2 ? 20_000_000 : 2_000_000;
            for (int i = 0; i < n; i++) {
                b.add(rnd.nextInt(300_000_000));
            }
            Path file = dir.resolve("s" + s + ".roaring");
            Files.write(file, b.build().write(SegmentBitmap.Format.ROARING32));
            String json =
                    "{\"segmentId\":\"s"
                            + s
                            + "\",\"version\":1,\"priority\":"
                            + (s % 3)
                            + ",\"format\":\"roaring32\",\"uri\":\""
                            + file.toUri()
                            + "\"}";
            String error =
                    table.apply(
                            SegmentUpdate.parse(json.getBytes(StandardCharsets.UTF_8)),
                            FlinkFileLoader.INSTANCE);
            if (error != null) {
                throw new IllegalStateException(error);
            }
        }
        rules.append("{\"segment\":\"*\",\"limits\":[{\"window\":\"1d\",\"max\":1}]}]}");
        LimitConfig config = LimitConfig.parse(rules.toString());
        System.out.printf(
                "8 segments for resolution: %,d bytes of bitmaps in memory%n", table.bytes());
        long[] users = new long[1 << 20];
        for (int i = 0; i < users.length; i++) {
            users[i] = rnd.nextInt(300_000_000);
        }
        int hits = 0;
        for (int warm = 0; warm < 5; warm++) {
            for (long u : users) {
                hits += table.resolve(u, config).length();
            }
        }
        int rounds = 20;
        long r0 = System.nanoTime();
        for (int r = 0; r < rounds; r++) {
            for (long u : users) {
                hits += table.resolve(u, config).length();
            }
        }
        double ns = (System.nanoTime() - r0) / (double) (rounds * users.length);
        System.out.printf(
                "resolution across 8 segments, random users of 300M: %.1f ns per user (%d)%n",
                ns, hits % 10);
        // The same for 4,096 neighbouring users, whose containers stay in the CPU caches: what a
        // lookup costs when memory is not the limit.
        long[] hot = new long[1 << 20];
        long base = 123_456_789L;
        for (int i = 0; i < hot.length; i++) {
            hot[i] = base + rnd.nextInt(4096);
        }
        for (long u : hot) {
            hits += table.resolve(u, config).length();
        }
        long h0 = System.nanoTime();
        for (int r = 0; r < rounds; r++) {
            for (long u : hot) {
                hits += table.resolve(u, config).length();
            }
        }
        double hotNs = (System.nanoTime() - h0) / (double) (rounds * hot.length);
        System.out.printf(
                "resolution across 8 segments, 4,096 neighbouring users: %.1f ns per user (%d)%n",
                hotNs, hits % 10);
    }
}
