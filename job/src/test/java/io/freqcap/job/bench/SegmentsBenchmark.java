package io.freqcap.job.bench;

import io.freqcap.operators.FlinkFileLoader;
import io.freqcap.operators.SegmentTable;
import io.freqcap.schema.LimitConfig;
import io.freqcap.schema.SegmentBitmap;
import io.freqcap.schema.SegmentUpdate;
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
        if (!Boolean.getBoolean("bench.resolutionOnly")) {
            buildDenseAndSparse(dir, rnd);
        }
        resolution(dir, rnd);
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
        SegmentBitmap dense = io.freqcap.job.SegmentsToolAccess.readIds(text);
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
