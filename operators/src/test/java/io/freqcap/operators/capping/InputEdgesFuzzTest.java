package io.freqcap.operators.capping;

import static org.junit.jupiter.api.Assertions.fail;

import io.freqcap.schema.edges.EdgeSequence;
import io.freqcap.schema.edges.EdgeSequence.Step;
import io.freqcap.schema.edges.EdgeSequences;
import io.freqcap.schema.edges.FuzzReport;
import io.freqcap.schema.edges.FuzzSeeds;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.config.Configurator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The edges of every input, found in the build (issue 46): random sequences of messages, limit
 * configs, segment updates, preferences, receipts and commands, each field at its edges most of the
 * time, as raw JSON bytes the way Kafka delivers them ({@link EdgeSequences}), run through the
 * capping operator on RocksDB with the clock moving on, snapshots, restores and rescales (1 to 2 to
 * 1) in between ({@link EdgeRun}). Nothing may escape the operator, each message ends in exactly
 * one outcome, each output record fits {@code --max-record-bytes}, no user has more than {@code
 * maxHeld} held messages waiting, and what the contract calls valid is read.
 *
 * <p>Which sequences run is {@link FuzzSeeds}': in every build the regression seeds of {@code
 * fuzz/InputEdgesFuzzTest.seeds} and {@value #FIXED_COUNT} seeds drawn from {@link #MASTER_SEED},
 * the same for everyone on one commit; {@code -Pfuzz} (or {@code -Dfuzz.fresh=true}) fresh seeds
 * for {@code -Dfuzz.seconds} (300); {@code -Dfuzz.seed=N} that one sequence. Every distinct failure
 * is reported with its seed. {@code -Dfuzz.shrink=true} cuts each failing sequence down to the
 * steps that still fail the same way and prints them (a minimal reproducer). {@code -Dfuzz.steps}
 * bounds a sequence's length (120).
 */
class InputEdgesFuzzTest {
    /**
     * The seed a build's fixed sequences are drawn from: change it in a commit, never by chance.
     */
    static final long MASTER_SEED = 0x46_57_2026_11_29L;

    /** How many fixed sequences a build runs (about 15 s on two cores). */
    static final int FIXED_COUNT = 30;

    static final Long SEED = Long.getLong("fuzz.seed");
    static final boolean SHRINK = Boolean.getBoolean("fuzz.shrink");
    static final int STEPS = Integer.getInteger("fuzz.steps", 120);
    static final boolean VERBOSE = Boolean.getBoolean("fuzz.verbose");

    private static final List<String> NOISY = List.of("io.freqcap", "org.apache.flink");
    private static final Map<String, Level> LEVELS = new LinkedHashMap<>();

    @BeforeAll
    static void quietLogs() {
        // Thousands of forget-user lines and RocksDB's memory warning for every task opened would
        // bury the report; errors stay.
        for (String logger : NOISY) {
            LEVELS.put(logger, LogManager.getLogger(logger).getLevel());
            Configurator.setLevel(logger, Level.ERROR);
        }
    }

    @AfterAll
    static void restoreLogs() {
        LEVELS.forEach(Configurator::setLevel);
    }

    /** The first sequence of each distinct failure, and how many sequences failed that way. */
    record Found(EdgeSequence sequence, EdgeRun.Failure failure, int times) {}

    @Test
    void everyInputAtItsEdgesEndsInOneOutcomeAndNothingEscapes() {
        Map<String, Found> found = new LinkedHashMap<>();
        long started = System.nanoTime();
        FuzzSeeds seeds =
                FuzzSeeds.of(
                        InputEdgesFuzzTest.class.getSimpleName(), MASTER_SEED, FIXED_COUNT, 300);
        Map<String, Long> tally = new java.util.TreeMap<>();
        int runs = 0;
        while (seeds.hasNext()) {
            long seed = seeds.next();
            EdgeSequence s = EdgeSequences.generate(seed, STEPS);
            runs++;
            long t0 = System.nanoTime();
            List<EdgeRun.Failure> failures = new EdgeRun(s, tally).run();
            if (VERBOSE) {
                System.out.printf(
                        "seed %d (%s, %d steps): %d ms, %s%n",
                        seed,
                        s.shape(),
                        s.steps().size(),
                        (System.nanoTime() - t0) / 1_000_000,
                        failures.stream().map(EdgeRun.Failure::signature).toList());
            }
            for (EdgeRun.Failure f : failures) {
                found.merge(
                        f.signature(),
                        new Found(s, f, 1),
                        (a, b) -> new Found(a.sequence(), a.failure(), a.times() + 1));
            }
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf(
                "InputEdgesFuzzTest: %d sequences in %.1f s, %d distinct failures%n",
                runs, seconds, found.size());
        System.out.println("  outcomes: " + tally);

        List<String> failing = new ArrayList<>();
        StringBuilder report = new StringBuilder();
        for (Found f : found.values()) {
            String line =
                    String.format(
                            "%s: %d sequences, first seed %d, a %s (-Dfuzz.seed=%d)",
                            f.failure().describe(),
                            f.times(),
                            f.sequence().seed(),
                            seeds.origin(f.sequence().seed()),
                            f.sequence().seed());
            report.append(line).append('\n');
            report.append("  ").append(firstLines(f.failure().cause())).append('\n');
            if (SHRINK || SEED != null) {
                EdgeSequence small = SHRINK ? shrink(f.sequence(), f.failure()) : f.sequence();
                report.append("  reproducer (whole in ")
                        .append(save(small, f.failure()))
                        .append("): ")
                        .append(small.describe())
                        .append('\n');
                if (SEED != null && !(f.failure().cause() instanceof EdgeRun.Broken)) {
                    f.failure().cause().printStackTrace(System.out);
                }
            }
            failing.add(line);
        }
        System.out.print(FuzzReport.ascii(report.toString()));
        if (!failing.isEmpty()) {
            fail(
                    FuzzReport.ascii(
                            failing.size()
                                    + " distinct failures at the edges of the inputs:\n"
                                    + String.join("\n", failing)
                                    + "\n"
                                    + report));
        }
    }

    /** Writes a reproducer whole (no value cut) under the build's directory; its path. */
    private static Path save(EdgeSequence s, EdgeRun.Failure f) {
        try {
            Path dir = Files.createDirectories(Path.of("target", "fuzz-reproducers"));
            String name = f.signature().replaceAll("[^A-Za-z0-9]+", "-");
            Path file = dir.resolve(name.substring(0, Math.min(80, name.length())) + ".txt");
            Files.writeString(file, f.describe() + "\n" + s.describe(false));
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String firstLines(Throwable t) {
        StringBuilder b = new StringBuilder(String.valueOf(t));
        StackTraceElement[] trace = t.getStackTrace();
        for (int i = 0; i < Math.min(6, trace.length); i++) {
            b.append("\n    at ").append(trace[i]);
        }
        return b.length() > 2000 ? b.substring(0, 2000) + "..." : b.toString();
    }

    /**
     * The sequence cut down, step chunks at a time, to what still fails the same way (within a
     * minute of trying): a reproducer a reader can follow.
     */
    static EdgeSequence shrink(EdgeSequence s, EdgeRun.Failure f) {
        long deadline = System.nanoTime() + Long.getLong("fuzz.shrinkSeconds", 60) * 1_000_000_000L;
        List<Step> steps =
                new ArrayList<>(s.steps().subList(0, Math.min(s.steps().size(), f.step() + 1)));
        EdgeSequence best = s.withSteps(steps);
        if (!failsSame(best, f)) {
            best = s; // the failure needs the end of the sequence (the clock running out)
            steps = new ArrayList<>(s.steps());
        }
        for (int chunk = Math.max(1, steps.size() / 2); chunk >= 1; chunk /= 2) {
            for (int i = 0; i + chunk <= steps.size() && System.nanoTime() < deadline; ) {
                List<Step> fewer = new ArrayList<>(steps.subList(0, i));
                fewer.addAll(steps.subList(i + chunk, steps.size()));
                EdgeSequence candidate = s.withSteps(fewer);
                if (failsSame(candidate, f)) {
                    steps = fewer;
                    best = candidate;
                } else {
                    i += chunk;
                }
            }
        }
        boolean plainer = true;
        while (plainer && System.nanoTime() < deadline) {
            plainer = false;
            for (EdgeSequence candidate : best.plainerStarts()) {
                if (!candidate.start().equals(best.start()) && failsSame(candidate, f)) {
                    best = candidate;
                    plainer = true;
                    break;
                }
            }
        }
        return best;
    }

    private static boolean failsSame(EdgeSequence s, EdgeRun.Failure f) {
        return new EdgeRun(s)
                .run().stream().anyMatch(again -> again.signature().equals(f.signature()));
    }
}
