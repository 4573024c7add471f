package io.freqcap.job.tools;

import java.io.PrintStream;

/** Lets the benchmark and the job tests run {@code freqcap-simulate} and {@code freqcap-export}. */
public final class SimulateAccess {
    private SimulateAccess() {}

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return Simulate.run(args, out, err);
    }

    public static int export(String[] args, PrintStream out, PrintStream err) {
        return Export.run(args, out, err);
    }
}
