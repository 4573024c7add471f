package io.freqcap.schema.edges;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Which sequences a fuzz test runs, so that one commit passes or fails the same way for everyone.
 *
 * <ul>
 *   <li>In every build: first the <b>regression seeds</b>, every seed that ever failed, kept with a
 *       line saying what it found in the resource {@code fuzz/<test>.seeds} (one {@code seed # what
 *       it found} per line); then {@code count} seeds drawn from {@code master}, a constant in the
 *       test's code. Changing either is a commit.
 *   <li>{@code -Dfuzz.fresh=true} (the Maven profile {@code -Pfuzz}): the regression seeds, then
 *       fresh seeds until {@code -Dfuzz.seconds} have passed, for whoever changes the decision. A
 *       seed that fails there goes into the resource file, with what it found.
 *   <li>{@code -Dfuzz.seed=N}: that one sequence.
 * </ul>
 */
public final class FuzzSeeds {
    /** Where a seed came from, for the report. */
    public enum Origin {
        REGRESSION,
        FIXED,
        FRESH,
        ASKED
    }

    private final Map<Long, String> regression;
    private final List<Long> fixed;
    private final boolean fresh;
    private final long deadline;
    private final SplittableRandom freshSeeds = new SplittableRandom();
    private int next;

    private FuzzSeeds(Map<Long, String> regression, List<Long> fixed, boolean fresh, long seconds) {
        this.regression = regression;
        this.fixed = fixed;
        this.fresh = fresh;
        this.deadline = System.nanoTime() + seconds * 1_000_000_000L;
    }

    /**
     * The seeds of one test, as the system properties ask.
     *
     * @param test the test's simple class name: its regression seeds are {@code fuzz/<test>.seeds}
     * @param master the seed the fixed seeds are drawn from
     * @param count how many fixed seeds a build runs
     * @param defaultSeconds the fresh run's budget without {@code -Dfuzz.seconds}
     */
    public static FuzzSeeds of(String test, long master, int count, long defaultSeconds) {
        Long asked = Long.getLong("fuzz.seed");
        if (asked != null) {
            return new FuzzSeeds(Map.of(), List.of(asked), false, 0);
        }
        Map<Long, String> regression = regressionSeeds(test);
        boolean fresh = Boolean.getBoolean("fuzz.fresh");
        List<Long> fixed = new ArrayList<>(regression.keySet());
        if (!fresh) {
            SplittableRandom drawn = new SplittableRandom(master);
            for (int i = 0; i < count; i++) {
                fixed.add(drawn.nextLong());
            }
        }
        return new FuzzSeeds(
                regression, fixed, fresh, Long.getLong("fuzz.seconds", defaultSeconds));
    }

    /** Whether another sequence runs. */
    public boolean hasNext() {
        return next < fixed.size() || (fresh && System.nanoTime() < deadline);
    }

    /** The next sequence's seed. */
    public long next() {
        return next < fixed.size() ? fixed.get(next++) : freshSeeds.nextLong();
    }

    /** Where a seed came from; a regression seed's line says what it once found. */
    public String origin(long seed) {
        String why = regression.get(seed);
        if (why != null) {
            return "regression seed (" + why + ")";
        }
        if (Long.getLong("fuzz.seed") != null) {
            return "asked for";
        }
        return fresh ? "fresh seed: keep it in fuzz/*.seeds" : "fixed seed";
    }

    /** The regression seeds of a test, in file order, each with what it found. */
    static Map<Long, String> regressionSeeds(String test) {
        Map<Long, String> seeds = new LinkedHashMap<>();
        String resource = "/fuzz/" + test + ".seeds";
        try (InputStream in = FuzzSeeds.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(
                        resource + " is missing: every fuzz test keeps its regression seeds");
            }
            BufferedReader lines =
                    new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                String s = line.strip();
                if (s.isEmpty() || s.startsWith("#")) {
                    continue;
                }
                int hash = s.indexOf('#');
                String seed = (hash < 0 ? s : s.substring(0, hash)).strip();
                String why = hash < 0 ? "" : s.substring(hash + 1).strip();
                if (why.isEmpty()) {
                    throw new IllegalStateException(
                            resource + ": say what seed " + seed + " found, after a #");
                }
                seeds.put(Long.parseLong(seed), why);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return seeds;
    }
}
