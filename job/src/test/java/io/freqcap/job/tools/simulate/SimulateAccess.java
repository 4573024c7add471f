package io.freqcap.job.tools.simulate;

import io.freqcap.job.tools.export.Export;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Lets the benchmark and the job tests run {@code freqcap-simulate} and {@code freqcap-export}. */
public final class SimulateAccess {
    private SimulateAccess() {}

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return Simulate.run(args, out, err);
    }

    /**
     * Runs {@code freqcap-simulate} and fails the test, with what it printed, unless it exits 0.
     */
    public static void simulate(String... args) {
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        int code =
                Simulate.run(
                        args,
                        new PrintStream(
                                new java.io.ByteArrayOutputStream(),
                                true,
                                java.nio.charset.StandardCharsets.UTF_8),
                        new PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
        org.junit.jupiter.api.Assertions.assertEquals(
                0, code, err.toString(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** What a run of {@code freqcap-simulate} printed, and its exit code. */
    public record Result(int code, String out, String err) {}

    /** Runs {@code freqcap-simulate}, keeping what it prints. */
    public static Result capture(String... args) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        int code =
                Simulate.run(
                        args,
                        new PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8),
                        new PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
        return new Result(
                code,
                out.toString(java.nio.charset.StandardCharsets.UTF_8),
                err.toString(java.nio.charset.StandardCharsets.UTF_8));
    }

    /**
     * Runs {@code freqcap-simulate} on {@code input} under {@code limits} into {@code output}, with
     * {@code extra} options, keeping what it prints.
     */
    public static Result capture(Path input, Path limits, Path output, String... extra) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--input", input.toString(),
                                "--limits", limits.toString(),
                                "--output", output.toString()));
        args.addAll(List.of(extra));
        return capture(args.toArray(new String[0]));
    }

    /** The same, failing the test, with what it printed, unless it exits 0. */
    public static Result captureOk(Path input, Path limits, Path output, String... extra) {
        Result r = capture(input, limits, output, extra);
        org.junit.jupiter.api.Assertions.assertEquals(0, r.code(), r.err());
        return r;
    }

    public static int export(String[] args, PrintStream out, PrintStream err) {
        return Export.run(args, out, err);
    }
}
