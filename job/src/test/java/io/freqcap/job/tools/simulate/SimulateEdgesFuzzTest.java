package io.freqcap.job.tools.simulate;

import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.edges.EdgeInput;
import io.freqcap.schema.edges.EdgeSequence;
import io.freqcap.schema.edges.EdgeSequences;
import io.freqcap.schema.edges.FuzzReport;
import io.freqcap.schema.edges.FuzzSeeds;
import io.freqcap.schema.edges.Validity;
import io.freqcap.schema.message.FutureBound;
import io.freqcap.schema.message.OutboundMessage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The same inputs at their edges ({@link EdgeSequences}) through {@code freqcap-simulate}, the
 * offline backtest (contract.md §8): the sequence's messages as the input file, its initial config
 * (or one of its configs) as {@code --limits}, its preferences as {@code --preferences}, its
 * receipts as {@code --receipts}, its segments, bounds and {@code --compare} config. Simulate never
 * throws; it exits 0 when the contract calls its inputs valid and 2 naming the problem when not; it
 * writes one line per input line, in input order, each the line of that input's message, audit
 * lines within {@code --max-record-bytes}, and reads every message the contract calls valid.
 *
 * <p>The seeds of {@link FuzzSeeds}: in every build the regression seeds of {@code
 * fuzz/SimulateEdgesFuzzTest.seeds} and {@value #FIXED_COUNT} drawn from {@link #MASTER_SEED};
 * {@code -Pfuzz} fresh seeds for {@code -Dfuzz.seconds} (120); {@code -Dfuzz.seed=N} one again.
 */
class SimulateEdgesFuzzTest {
    /**
     * The seed a build's fixed sequences are drawn from: change it in a commit, never by chance.
     */
    static final long MASTER_SEED = 0x5_1_2026_11_29L;

    /** How many fixed sequences a build runs (about 5 s on two cores). */
    static final int FIXED_COUNT = 40;

    static final int STEPS = Integer.getInteger("fuzz.steps", 120);
    static final boolean VERBOSE = Boolean.getBoolean("fuzz.verbose");

    @TempDir Path tmp;

    /** A promise simulate broke, by a short signature. */
    record Failure(String signature, String detail) {}

    record Found(long seed, Failure failure, int times) {}

    @Test
    void simulateNeverThrowsAndWritesOneLinePerInputAtTheEdges() throws Exception {
        Map<String, Found> found = new LinkedHashMap<>();
        long started = System.nanoTime();
        FuzzSeeds seeds =
                FuzzSeeds.of(
                        SimulateEdgesFuzzTest.class.getSimpleName(), MASTER_SEED, FIXED_COUNT, 120);
        int runs = 0;
        while (seeds.hasNext()) {
            long seed = seeds.next();
            EdgeSequence s = EdgeSequences.generate(seed, STEPS);
            Path dir = Files.createDirectories(tmp.resolve("run-" + runs));
            List<Failure> failures = run(s, dir);
            runs++;
            if (VERBOSE) {
                System.out.printf(
                        "seed %d (%s): %s%n",
                        seed, s.shape(), FuzzReport.ascii(failures.toString()));
            }
            for (Failure f : failures) {
                found.merge(
                        f.signature(),
                        new Found(seed, f, 1),
                        (a, b) -> new Found(a.seed(), a.failure(), a.times() + 1));
            }
        }
        System.out.printf(
                "SimulateEdgesFuzzTest: %d sequences in %.1f s, %d distinct failures%n",
                runs, (System.nanoTime() - started) / 1e9, found.size());
        List<String> failing = new ArrayList<>();
        for (Found f : found.values()) {
            String line =
                    String.format(
                            "%s: %d sequences, first seed %d, a %s (-Dfuzz.seed=%d)%n  %s",
                            f.failure().signature(),
                            f.times(),
                            f.seed(),
                            seeds.origin(f.seed()),
                            f.seed(),
                            cut(f.failure().detail()));
            System.out.println(FuzzReport.ascii(line));
            failing.add(line);
        }
        if (!failing.isEmpty()) {
            fail(
                    FuzzReport.ascii(
                            failing.size()
                                    + " distinct failures of simulate:\n"
                                    + String.join("\n", failing)));
        }
    }

    private static String cut(String s) {
        return s.length() <= 1500 ? s : s.substring(0, 1500) + "...";
    }

    /** One sequence through simulate: what it broke. */
    List<Failure> run(EdgeSequence s, Path dir) throws IOException {
        Random r = new Random(s.seed());
        EdgeSequence.Start start = s.start();
        List<Failure> failures = new ArrayList<>();

        // --limits: the initial config, or now and then one of the sequence's own.
        String limits = start.initialConfig();
        Validity expected = Validity.VALID;
        List<EdgeInput> configs =
                s.inputs(EdgeInput.Topic.CONFIG).stream()
                        .filter(c -> c.value() != null && !text(c.value()).contains("\"command\""))
                        .toList();
        if (!configs.isEmpty() && r.nextInt(5) == 0) {
            EdgeInput c = configs.get(r.nextInt(configs.size()));
            limits = text(c.value());
            expected = c.validity();
        }
        List<String> args = new ArrayList<>();
        args.addAll(List.of("--limits", write(dir, "limits.json", limits).toString()));
        if (start.initialSegments() != null) {
            args.addAll(
                    List.of(
                            "--segments",
                            write(dir, "segments.json", start.initialSegments()).toString()));
        }
        if (start.compareConfig() != null) {
            args.addAll(
                    List.of(
                            "--compare",
                            write(dir, "compare.json", start.compareConfig()).toString(),
                            "--compare-output",
                            dir.resolve("compare.jsonl").toString()));
        }
        // --preferences: the valid ones (no tombstones), an invalid one now and then.
        StringBuilder prefs = new StringBuilder();
        for (EdgeInput p : s.inputs(EdgeInput.Topic.PREFERENCES)) {
            if (p.value() == null || p.key() != null && p.validity() != Validity.VALID) {
                continue; // a tombstone, or a record refused for its key, which a file has not
            }
            if (p.validity() == Validity.VALID
                    || (p.validity() == Validity.INVALID && r.nextInt(8) == 0)) {
                String line = text(p.value());
                if (line.contains("\n") || line.isBlank()) {
                    continue;
                }
                prefs.append(line).append('\n');
                expected = expected.and(p.validity());
            }
        }
        if (!prefs.isEmpty()) {
            args.addAll(
                    List.of(
                            "--preferences",
                            write(dir, "preferences.jsonl", prefs.toString()).toString()));
        }
        // --receipts: the valid ones with a timestamp (simulate refuses one without, §8), an
        // invalid or timeless one now and then.
        StringBuilder receipts = new StringBuilder();
        for (EdgeInput p : s.inputs(EdgeInput.Topic.RECEIPTS)) {
            if (p.value() == null || p.validity() == Validity.UNSETTLED) {
                continue;
            }
            String line = text(p.value());
            if (line.contains("\n") || line.contains("\r") || line.isBlank()) {
                continue;
            }
            Validity v = p.validity();
            if (v == Validity.VALID && !stamped(line)) {
                v = Validity.INVALID;
            }
            if (v == Validity.VALID || r.nextInt(8) == 0) {
                receipts.append(line).append('\n');
                expected = expected.and(v);
            }
        }
        if (!receipts.isEmpty()) {
            args.addAll(
                    List.of(
                            "--receipts",
                            write(dir, "receipts.jsonl", receipts.toString()).toString()));
        }
        // --input: the message topic's values, one a line (a value with a newline in it is two).
        ByteArrayOutputStream input = new ByteArrayOutputStream();
        List<EdgeInput> lines = new ArrayList<>();
        for (EdgeInput m : s.messages()) {
            if (m.value() == null || contains(m.value(), (byte) '\n')) {
                continue;
            }
            input.write(m.value());
            input.write('\n');
            lines.add(m);
        }
        Path in = dir.resolve("in.jsonl");
        Files.write(in, input.toByteArray());
        Path out = dir.resolve("out.jsonl");
        args.addAll(
                List.of(
                        "--input", in.toString(),
                        "--output", out.toString(),
                        "--max-record-bytes", Integer.toString(start.maxRecordBytes()),
                        "--max-future", start.maxFuture(),
                        "--lifetime-retention", start.lifetimeRetention()));
        if (r.nextBoolean()) {
            args.addAll(List.of("--summary", dir.resolve("summary.json").toString()));
        }

        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        int code;
        long now = System.currentTimeMillis();
        try {
            code =
                    Simulate.run(
                            args.toArray(new String[0]),
                            new PrintStream(stdout, true, StandardCharsets.UTF_8),
                            new PrintStream(stderr, true, StandardCharsets.UTF_8));
        } catch (Throwable t) {
            failures.add(new Failure(FuzzReport.signature(t), stackTop(t)));
            return failures;
        }
        String err = stderr.toString(StandardCharsets.UTF_8);
        if (code == 2) {
            if (expected == Validity.VALID) {
                failures.add(
                        new Failure(
                                "valid inputs refused: " + field(err),
                                err + " (" + String.join(" ", args) + ")"));
            }
            return failures;
        }
        if (code != 0) {
            String[] errLines = err.strip().split("\n");
            String last = errLines[errLines.length - 1].replaceAll("\\d+", "n");
            failures.add(new Failure("exit " + code + ": " + last, err));
            return failures;
        }
        if (expected == Validity.INVALID) {
            failures.add(new Failure("invalid --limits, --preferences or --receipts taken", err));
        }
        failures.addAll(checkLines(out, lines, start, now));
        if (start.compareConfig() != null) {
            failures.addAll(checkLines(dir.resolve("compare.jsonl"), lines, start, now));
        }
        return failures;
    }

    /** Whether a receipt's JSON has a timestamp (null is none). */
    private static boolean stamped(String json) {
        try {
            JsonNode t = Json.MAPPER.readTree(json).get("timestamp");
            return t != null && !t.isNull();
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** One line per input line, each of its own message, read when the contract says so. */
    private static List<Failure> checkLines(
            Path out, List<EdgeInput> inputs, EdgeSequence.Start start, long now)
            throws IOException {
        List<Failure> failures = new ArrayList<>();
        List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
        if (lines.size() != inputs.size()) {
            failures.add(
                    new Failure(
                            "not one line per input line",
                            lines.size() + " lines for " + inputs.size() + " inputs"));
            return failures;
        }
        FutureBound future = FutureBound.parse(start.maxFuture());
        for (int i = 0; i < lines.size(); i++) {
            EdgeInput in = inputs.get(i);
            JsonNode line;
            try {
                line = Json.MAPPER.readTree(lines.get(i));
            } catch (IOException e) {
                failures.add(new Failure("a line is not JSON", e.getMessage()));
                continue;
            }
            String decision = line.path("decision").asText();
            boolean delivered = decision.equals("ALLOWED") || decision.equals("EXEMPT");
            int bytes = lines.get(i).getBytes(StandardCharsets.UTF_8).length;
            if (!delivered && bytes > start.maxRecordBytes()) {
                failures.add(
                        new Failure(
                                "audit line over --max-record-bytes",
                                bytes + " > " + start.maxRecordBytes()));
            }
            int size = in.value().length;
            if (decision.equals("MALFORMED")) {
                if (line.at("/source/offset").asLong(-1) != i) {
                    failures.add(new Failure("MALFORMED line of another input", line.toString()));
                }
                if (in.validity() == Validity.VALID && size <= start.maxRecordBytes()) {
                    try {
                        OutboundMessage m = OutboundMessage.parse(in.value());
                        long t = m.timestamp();
                        if (size + Long.toString(m.userId()).length() > start.maxRecordBytes()) {
                            continue; // too large for its delivery, keyed by the userId text
                        }
                        // simulate's clock is the machine's: a margin of a minute for the run
                        if (future.millis() == Long.MAX_VALUE
                                || t - now <= future.millis() - 60_000) {
                            failures.add(
                                    new Failure(
                                            "valid message refused",
                                            line.path("error").asText() + " of " + in));
                        }
                    } catch (MalformedRecordException e) {
                        failures.add(
                                new Failure("valid message refused", e.getMessage() + " of " + in));
                    }
                }
                continue;
            }
            if (in.validity() == Validity.INVALID) {
                failures.add(new Failure("invalid message decided", in.toString()));
                continue;
            }
            try {
                OutboundMessage m = OutboundMessage.parse(in.value());
                if (!line.path("messageId").asText().equals(m.messageId())
                        || line.path("userId").asLong() != m.userId()) {
                    failures.add(
                            new Failure(
                                    "a line of another message",
                                    "line " + i + " " + line + " for " + in));
                }
            } catch (MalformedRecordException e) {
                failures.add(new Failure("decided a message it cannot read", in.toString()));
            }
        }
        return failures;
    }

    private static Path write(Path dir, String name, String text) throws IOException {
        return Files.writeString(dir.resolve(name), text, StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    private static boolean contains(byte[] b, byte x) {
        for (byte c : b) {
            if (c == x) {
                return true;
            }
        }
        return false;
    }

    /** The option and field an error names ({@code --preferences: ... line 3: optOut...}). */
    static String field(String err) {
        String e = err.replaceAll("\\d+", "n");
        int line = e.indexOf("line n: ");
        if (line >= 0) {
            e = e.substring(line + "line n: ".length());
        } else if (e.startsWith("freqcap-simulate: ")) {
            e = e.substring("freqcap-simulate: ".length());
        }
        int colon = e.indexOf(':');
        String f = colon < 0 ? e : e.substring(0, colon);
        return f.length() > 80 ? f.substring(0, 80) : f.strip();
    }

    private static String stackTop(Throwable t) {
        StringBuilder b = new StringBuilder(String.valueOf(t));
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
            b.append("\n  caused by ").append(root);
        }
        StackTraceElement[] trace = root.getStackTrace();
        for (int i = 0; i < Math.min(8, trace.length); i++) {
            b.append("\n    at ").append(trace[i]);
        }
        return b.toString();
    }
}
