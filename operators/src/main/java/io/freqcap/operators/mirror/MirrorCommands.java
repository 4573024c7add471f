package io.freqcap.operators.mirror;

import io.freqcap.schema.mirror.MirrorWrite;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Redis commands a batch of mirror writes becomes (contract.md §7): plain commands where the
 * write knows what it changes, {@link MirrorScript} where it does not. Plain Java, no Redis client:
 * what a batch sends is decided here and tested on its own.
 *
 * <p>A user's adding writes in one batch (under one window) become one multi-member {@code ZADD}
 * per key, then a {@code ZREMRANGEBYSCORE} per key a write says holds a member below the bound (the
 * user's latest stamped timestamp minus the window: the later bound of the writes), then a {@code
 * PEXPIREAT} per key added to, a window after the later of {@code now} and the user's highest
 * score. That is what the script did for them, in fewer commands and without reading a key back. A
 * removal is a multi-member {@code ZREM} per key. A replacing write (a rebuild: the user's keys
 * replaced atomically) and an adding one that does not know the user's highest score (a backlog
 * restored from an earlier version) go through the script, which reads it. A user's writes keep
 * their order: a write that cannot join the user's open group sends that group first.
 *
 * <p>Each command is idempotent and a batch's result does not depend on what Redis held before
 * beyond what the script's would, so replaying batches in order leaves the same content.
 */
public final class MirrorCommands {
    private MirrorCommands() {}

    /** Where the commands go: a pipeline of Redis commands, or a recorder in tests. */
    public interface Target {
        void zadd(String key, long[] scores, String[] members, int n);

        void zrem(String key, String[] members, int n);

        /**
         * {@code ZREMRANGEBYSCORE key -inf (bound}: removes members scored before {@code bound}.
         */
        void trim(String key, long bound);

        void expireAt(String key, long epochMillis);

        /** One {@code EVALSHA} of {@link MirrorScript} with these writes (one window). */
        void script(List<MirrorWrite> writes);

        /** The commands since the last call were all of one user's keys (one cluster slot). */
        default void userDone() {}
    }

    /**
     * Sends the commands of {@code batch} to {@code target}, in an order that keeps each user's
     * writes in order.
     *
     * @param now the wall clock (epoch ms): keys expire a window after it at the earliest
     * @param writesPerScript the most writes one script call carries (1 in a cluster: one slot)
     */
    public static void send(
            String prefix, List<MirrorWrite> batch, long now, int writesPerScript, Target target) {
        new Encoder(prefix, now, writesPerScript, target).send(batch);
    }

    private static final class Encoder {
        private final String prefix;
        private final long now;
        private final int writesPerScript;
        private final Target target;
        private final Map<Long, UserAdds> open = new LinkedHashMap<>();
        private final List<MirrorWrite> scripted = new ArrayList<>();
        private final Set<Long> scriptedUsers = new HashSet<>();

        Encoder(String prefix, long now, int writesPerScript, Target target) {
            this.prefix = prefix;
            this.now = now;
            this.writesPerScript = writesPerScript;
            this.target = target;
        }

        void send(List<MirrorWrite> batch) {
            for (MirrorWrite w : batch) {
                boolean plainAdd = w.kind() == MirrorWrite.Kind.ADD && w.knowsHighestScore();
                if (scriptedUsers.contains(w.userId())) {
                    flushScripted(); // the script's writes of this user go first
                }
                if (plainAdd) {
                    UserAdds adds = open.get(w.userId());
                    if (adds != null && adds.window != w.windowMillis()) {
                        // Each write's trim by its own window: a later write under a longer
                        // window may add what the earlier bound lies above.
                        open.remove(w.userId()).send(w.userId());
                        adds = null;
                    }
                    if (adds == null) {
                        adds = new UserAdds(w.windowMillis());
                        open.put(w.userId(), adds);
                    }
                    adds.add(w);
                    continue;
                }
                UserAdds adds = open.remove(w.userId());
                if (adds != null) {
                    adds.send(w.userId());
                }
                if (w.kind() == MirrorWrite.Kind.REMOVE) {
                    remove(w);
                    target.userDone();
                } else {
                    script(w);
                }
            }
            flushScripted();
            open.forEach((user, adds) -> adds.send(user));
        }

        private void remove(MirrorWrite w) {
            if (w.size() == 0) {
                return;
            }
            String[] ids = w.messageIds();
            target.zrem(MirrorWrite.userKey(prefix, w.userId()), ids, ids.length);
            String[] members = new String[w.size()];
            for (int c = 0; c < w.channels().length; c++) {
                int n = 0;
                for (int i = 0; i < w.size(); i++) {
                    if (w.channelOf()[i] == c) {
                        members[n++] = ids[i];
                    }
                }
                if (n > 0) {
                    target.zrem(
                            MirrorWrite.channelKey(prefix, w.userId(), w.channels()[c]),
                            members,
                            n);
                }
            }
        }

        private void script(MirrorWrite w) {
            if (!scripted.isEmpty()
                    && (scripted.size() >= writesPerScript
                            || scripted.get(0).windowMillis() != w.windowMillis())) {
                flushScripted();
            }
            scripted.add(w);
            scriptedUsers.add(w.userId());
        }

        private void flushScripted() {
            if (!scripted.isEmpty()) {
                target.script(List.copyOf(scripted));
                scripted.clear();
                scriptedUsers.clear();
            }
        }

        /** One user's adding writes of the batch under one window, merged. */
        private final class UserAdds {
            final long window;

            /** Per channel (null: the user's key), the members added, in order. */
            private final Map<String, Members> members = new LinkedHashMap<>();

            private final Set<String> trimmed = new LinkedHashSet<>();
            private long bound = Long.MIN_VALUE;
            private boolean trims;
            private long expireAt = Long.MIN_VALUE;

            UserAdds(long window) {
                this.window = window;
            }

            void add(MirrorWrite w) {
                for (int i = 0; i < w.size(); i++) {
                    members.computeIfAbsent(null, c -> new Members())
                            .add(w.timestamps()[i], w.messageIds()[i]);
                    members.computeIfAbsent(w.channels()[w.channelOf()[i]], c -> new Members())
                            .add(w.timestamps()[i], w.messageIds()[i]);
                }
                if (w.latestStamped() != MirrorWrite.NO_TRIM) {
                    trims = true;
                    bound = Math.max(bound, w.latestStamped() - window);
                    trimmed.addAll(List.of(w.channels()));
                }
                if (w.size() > 0) {
                    expireAt =
                            Math.max(expireAt, Math.max(now, w.highestScore()) + w.windowMillis());
                }
            }

            void send(long user) {
                for (Map.Entry<String, Members> e : members.entrySet()) {
                    Members m = e.getValue();
                    target.zadd(key(user, e.getKey()), m.scores, m.ids, m.n);
                }
                if (trims) {
                    target.trim(key(user, null), bound);
                    for (String c : trimmed) {
                        target.trim(key(user, c), bound);
                    }
                }
                for (String c : members.keySet()) {
                    target.expireAt(key(user, c), expireAt);
                }
                target.userDone();
            }

            private String key(long user, String channel) {
                return channel == null
                        ? MirrorWrite.userKey(prefix, user)
                        : MirrorWrite.channelKey(prefix, user, channel);
            }
        }
    }

    /** Members of one key, growing. */
    private static final class Members {
        long[] scores = new long[1];
        String[] ids = new String[1];
        int n;

        void add(long score, String id) {
            if (n == scores.length) {
                scores = java.util.Arrays.copyOf(scores, n * 2);
                ids = java.util.Arrays.copyOf(ids, n * 2);
            }
            scores[n] = score;
            ids[n++] = id;
        }
    }
}
