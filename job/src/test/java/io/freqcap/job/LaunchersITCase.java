package io.freqcap.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every {@code bin/freqcap-*} launcher starts its tool the same way (bin/lib/launch.sh): from the
 * packaged build, with {@code FREQCAP_JAVA_OPTS} and the same logging; {@code --help} prints the
 * tool's usage and exits 0.
 */
class LaunchersITCase {
    static final Path BIN = Path.of("..", "bin").toAbsolutePath().normalize();

    @ParameterizedTest
    @ValueSource(strings = {"local", "export", "query", "segments", "simulate", "cluster"})
    void helpPrintsTheToolsUsage(String tool) throws Exception {
        Result r = run(tool, null, "--help");
        assertEquals(0, r.exit(), r.output());
        assertTrue(r.output().toLowerCase().contains("usage"), r.output());
    }

    @ParameterizedTest
    @ValueSource(strings = {"local", "export", "query", "segments", "simulate", "cluster"})
    void javaOptionsReachTheJvm(String tool) throws Exception {
        Result r = run(tool, "-XX:+NoSuchFreqcapFlag", "--help");
        assertTrue(r.exit() != 0, r.output());
        assertTrue(r.output().contains("NoSuchFreqcapFlag"), r.output());
    }

    record Result(int exit, String output) {}

    static Result run(String tool, String javaOpts, String... args) throws Exception {
        Path launcher = BIN.resolve("freqcap-" + tool);
        assertTrue(Files.isExecutable(launcher), launcher + " is executable");
        ProcessBuilder pb =
                new ProcessBuilder(new java.util.ArrayList<>(List.of(launcher.toString())))
                        .redirectErrorStream(true);
        pb.command().addAll(List.of(args));
        pb.environment().remove("FREQCAP_JAVA_OPTS");
        if (javaOpts != null) {
            pb.environment().put("FREQCAP_JAVA_OPTS", javaOpts);
        }
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), tool + " ended");
        return new Result(p.exitValue(), out);
    }
}
