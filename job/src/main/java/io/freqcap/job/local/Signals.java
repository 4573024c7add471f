package io.freqcap.job.local;

import java.io.IOException;

/** Signals to the processes the local runner starts (a broker, redis-server): pause, resume. */
final class Signals {
    private Signals() {}

    /** Sends {@code signal} ({@code -STOP}, {@code -CONT}, ...) with {@code kill}. */
    static void send(Process process, String signal) throws IOException, InterruptedException {
        int exit =
                new ProcessBuilder("kill", signal, Long.toString(process.pid()))
                        .inheritIO()
                        .start()
                        .waitFor();
        if (exit != 0) {
            throw new IOException("kill " + signal + " " + process.pid() + " exited " + exit);
        }
    }
}
