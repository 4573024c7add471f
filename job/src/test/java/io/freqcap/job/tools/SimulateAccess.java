package io.freqcap.job.tools;

import java.io.PrintStream;

/** Lets the benchmark run {@code freqcap-simulate} in its own JVM, round after round. */
public final class SimulateAccess {
    private SimulateAccess() {}

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return Simulate.run(args, out, err);
    }
}
