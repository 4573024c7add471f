package io.freqcap.job.local;

import java.io.PrintStream;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The local runner's progress line, every five seconds and once more when the runner stops: what
 * went in and what was decided.
 */
final class ProgressLine implements AutoCloseable {
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final PrintStream out;
    private final TrafficGenerator generator;
    private final OutputCounter counter;
    private final MirrorProgress mirror;
    private final HeldProgress held;
    private long lastTotal;
    private long lastNanos = System.nanoTime();

    /**
     * @param generator null when nothing is generated
     * @param mirror null without a Redis mirror
     * @param held null without a job
     */
    ProgressLine(
            PrintStream out,
            TrafficGenerator generator,
            OutputCounter counter,
            MirrorProgress mirror,
            HeldProgress held) {
        this.out = out;
        this.generator = generator;
        this.counter = counter;
        this.mirror = mirror;
        this.held = held;
        timer.scheduleAtFixedRate(this::print, 5, 5, TimeUnit.SECONDS);
    }

    /** Prints the line now (the last one, once the last checkpoint has committed). */
    synchronized void print() {
        long now = System.nanoTime();
        long total = counter.total();
        double rate = (total - lastTotal) / ((now - lastNanos) / 1e9);
        lastTotal = total;
        lastNanos = now;
        HeldProgress.Counts h = held == null ? HeldProgress.Counts.UNKNOWN : held.counts();
        out.printf(
                "in %,d | allowed %,d | exempt %,d | rejected %,d | duplicate %,d | stale %,d | malformed %,d | shadow-rejected %,d | held %s (waiting %s) | released %s | preempted %s | cancelled %s | preferences %s | un-counted %s | opens %s | under a lowered cap %s | lifetime-rejected %s | %,.0f decisions/s%s%n",
                generator == null ? -1 : generator.sent(),
                counter.count("ALLOWED"),
                counter.count("EXEMPT"),
                counter.count("REJECTED"),
                counter.count("DUPLICATE"),
                counter.count("STALE"),
                counter.count("MALFORMED"),
                counter.count(OutputCounter.SHADOW_REJECTED),
                known(h.of("held")),
                known(h.of("heldNow")),
                known(h.of("released")),
                known(h.of("preempted")),
                known(h.of("cancelled")),
                known(h.of("preferencesApplied")),
                known(h.of("receiptsApplied")),
                known(h.of("engagements")),
                known(h.of("fatigued")),
                known(h.of("lifetimeRejected")),
                rate,
                mirror == null ? "" : " | redis keys " + mirror.keys());
    }

    private static String known(long n) {
        return n < 0 ? "-" : String.format("%,d", n);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
