package io.freqcap.job.local;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * When the local runner should stop: Ctrl-C (a shutdown hook that then waits, at most a minute, for
 * the runner to finish stopping) or a latch a test counts down.
 */
final class StopSignal implements AutoCloseable {
    private final CountDownLatch requested = new CountDownLatch(1);
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Thread hook;

    /**
     * @param extra another way to ask for a stop; may be null
     */
    StopSignal(CountDownLatch extra) {
        hook =
                new Thread(
                        () -> {
                            requested.countDown();
                            try {
                                stopped.await(60, TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        },
                        "freqcap-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        if (extra != null) {
            Thread relay =
                    new Thread(
                            () -> {
                                try {
                                    extra.await();
                                    requested.countDown();
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                            },
                            "freqcap-stop-relay");
            relay.setDaemon(true);
            relay.start();
        }
    }

    boolean requested() {
        return requested.getCount() == 0;
    }

    /** Waits at most {@code millis} for a stop request. */
    void await(long millis) throws InterruptedException {
        requested.await(millis, TimeUnit.MILLISECONDS);
    }

    /** The runner has stopped: a waiting Ctrl-C may let the JVM exit. */
    @Override
    public void close() {
        stopped.countDown();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // Ctrl-C: the hook is running and waits for 'stopped'.
        }
    }
}
