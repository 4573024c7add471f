package io.freqcap.job;

import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import io.freqcap.operators.mirror.MirrorSettings;
import io.freqcap.operators.mirror.RedisConnection;
import io.lettuce.core.SetArgs;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks at start that Redis takes the mirror's credentials (contract.md §8): a wrong password, an
 * unknown ACL user or one that may not run the mirror's commands ({@code SET}, {@code DEL} on its
 * keys, {@code PING}) stops the start with one line, so that no job runs on with a mirror that
 * writes nothing. Redis merely away at start only delays the mirror: the check logs it and lets the
 * job start. Nothing it says carries a password.
 */
public final class RedisPreflight {
    private static final Logger LOG = LoggerFactory.getLogger(RedisPreflight.class);

    private RedisPreflight() {}

    /** How long the check waits for Redis at most. */
    public static final Duration TIMEOUT = Duration.ofSeconds(20);

    /**
     * @param mirror the job's mirror, or null for none (nothing to check)
     * @throws InvalidOptionException with the one line to show, when Redis refused the credentials
     */
    public static void check(MirrorSettings mirror, Duration timeout)
            throws InvalidOptionException {
        if (mirror == null) {
            return;
        }
        String where = "Redis at " + RedisConnection.redact(mirror.uri());
        RedisConnection c;
        try {
            c =
                    RedisConnection.connect(mirror.uri(), mirror.passwordFile())
                            .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            refusedOrAway(where, e.getCause());
            return;
        } catch (TimeoutException e) {
            away(where, "no answer within " + timeout.toSeconds() + " s");
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (IllegalArgumentException e) {
            throw new InvalidOptionException("--redis: " + e.getMessage());
        }
        try {
            // Each command the mirror sends, on a key no user has (user ids are integers),
            // changing nothing: an ACL user that may not run one is refused here, not later.
            String key = mirror.keyPrefix() + ":{freqcap-start-check}";
            var allowed =
                    CompletableFuture.allOf(
                            c.commands().ping().toCompletableFuture(),
                            c.strings()
                                    .set(key, new byte[0], SetArgs.Builder.xx().pxAt(1L))
                                    .toCompletableFuture(),
                            c.keys().del(key).toCompletableFuture());
            c.flush();
            allowed.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            refusedOrAway(where, e.getCause());
        } catch (TimeoutException e) {
            away(where, "no answer within " + timeout.toSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            c.close();
        }
    }

    /** Redis' own word for refused credentials or a missing permission, if the failure has one. */
    static String refusal(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            String m = t.getMessage();
            if (m == null) {
                continue;
            }
            for (String word : new String[] {"WRONGPASS", "NOAUTH", "NOPERM", "ERR AUTH"}) {
                int at = m.toUpperCase(Locale.ROOT).indexOf(word);
                if (at >= 0) {
                    return m.substring(at).lines().findFirst().orElse(word);
                }
            }
        }
        return null;
    }

    private static void refusedOrAway(String where, Throwable failure)
            throws InvalidOptionException {
        String refusal = refusal(failure);
        if (refusal != null) {
            throw new InvalidOptionException(
                    where
                            + " refused the job's credentials: "
                            + refusal
                            + " (check the --redis user and password or --redis-password-file,"
                            + " and the ACL user's permissions: docs/operations.md, Security)");
        }
        away(where, failure.getClass().getSimpleName());
    }

    private static void away(String where, String why) {
        LOG.warn(
                "{} does not answer at start ({}): the job starts, and the mirror catches up"
                        + " once Redis answers",
                where,
                why);
    }
}
