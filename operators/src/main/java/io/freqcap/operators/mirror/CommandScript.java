package io.freqcap.operators.mirror;

import io.freqcap.schema.mirror.MirrorWrite;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The mirror's commands ({@link MirrorCommands}) carried by one {@code EVALSHA} for many users: the
 * script only runs them, in order, with the arguments the job computed (no parsing, no reading a
 * key back), so Redis does what the plain commands do and the job sends one command, not five, per
 * counted message. Plain Java, no Redis client.
 *
 * <p>ARGV holds, per command, its name, its key's position in KEYS, its number of arguments and
 * those arguments. Only the four commands the mirror sends are run. A call carries the commands of
 * at most a given number of users (in a cluster one: one slot), and is cut between two commands
 * when it grows long; a command adds or removes at most {@link #MEMBERS_PER_COMMAND} members.
 */
public final class CommandScript {
    private CommandScript() {}

    public static final String SOURCE =
            String.join(
                    "\n",
                    "local allowed = {ZADD = true, ZREM = true, ZREMRANGEBYSCORE = true,"
                            + " PEXPIREAT = true}",
                    "local a, n = 1, #ARGV",
                    "while a <= n do",
                    "  local c = tonumber(ARGV[a + 2])",
                    "  if not allowed[ARGV[a]] then return redis.error_reply('not a mirror command') end",
                    "  redis.call(ARGV[a], KEYS[tonumber(ARGV[a + 1])], unpack(ARGV, a + 3, a + 2 + c))",
                    "  a = a + 3 + c",
                    "end",
                    "return n",
                    "");

    public static final String SHA1 = MirrorScript.sha1(SOURCE);

    /**
     * Members per {@code ZADD} or {@code ZREM} in a call: Lua's {@code unpack} takes at most about
     * 8,000 values, and a {@code cancel-held} may remove up to {@code maxHeld} (10,000) of a user's
     * held messages in one write.
     */
    static final int MEMBERS_PER_COMMAND = 1000;

    /** Arguments after which a call is sent, between two commands (one Redis, calls in order). */
    static final int ARGS_PER_CALL = 20_000;

    /**
     * Collects commands into calls of at most {@code usersPerCall} users (1 in a cluster: a call
     * touches one slot) and hands each call's KEYS and ARGV to {@code call}; a write that needs
     * {@link MirrorScript} goes to {@code scripts} after what was collected before it.
     */
    public static final class Calls implements MirrorCommands.Target {
        private final int usersPerCall;
        private final BiConsumer<String[], String[]> call;
        private final Consumer<List<MirrorWrite>> scripts;
        private final Map<String, Integer> keyIndex = new HashMap<>();
        private final List<String> keys = new ArrayList<>();
        private final List<String> args = new ArrayList<>();
        private int users;

        public Calls(
                int usersPerCall,
                BiConsumer<String[], String[]> call,
                Consumer<List<MirrorWrite>> scripts) {
            this.usersPerCall = usersPerCall;
            this.call = call;
            this.scripts = scripts;
        }

        private void command(String name, String key, int n) {
            if (args.size() >= ARGS_PER_CALL) {
                flush();
            }
            Integer k = keyIndex.get(key);
            if (k == null) {
                keys.add(key);
                k = keys.size();
                keyIndex.put(key, k);
            }
            args.add(name);
            args.add(Integer.toString(k));
            args.add(Integer.toString(n));
        }

        @Override
        public void zadd(String key, long[] scores, String[] members, int n) {
            for (int from = 0; from < n; from += MEMBERS_PER_COMMAND) {
                int to = Math.min(n, from + MEMBERS_PER_COMMAND);
                command("ZADD", key, 2 * (to - from));
                for (int i = from; i < to; i++) {
                    args.add(Long.toString(scores[i]));
                    args.add(members[i]);
                }
            }
        }

        @Override
        public void zrem(String key, String[] members, int n) {
            for (int from = 0; from < n; from += MEMBERS_PER_COMMAND) {
                int to = Math.min(n, from + MEMBERS_PER_COMMAND);
                command("ZREM", key, to - from);
                for (int i = from; i < to; i++) {
                    args.add(members[i]);
                }
            }
        }

        @Override
        public void trim(String key, long bound) {
            command("ZREMRANGEBYSCORE", key, 2);
            args.add("-inf");
            args.add("(" + bound);
        }

        @Override
        public void expireAt(String key, long epochMillis) {
            command("PEXPIREAT", key, 1);
            args.add(Long.toString(epochMillis));
        }

        @Override
        public void script(List<MirrorWrite> writes) {
            flush(); // what came before goes first
            scripts.accept(writes);
        }

        @Override
        public void userDone() {
            if (++users >= usersPerCall) {
                flush();
            }
        }

        /** Hands over what is collected, if anything. */
        public void flush() {
            if (!args.isEmpty()) {
                call.accept(keys.toArray(new String[0]), args.toArray(new String[0]));
            }
            keys.clear();
            args.clear();
            keyIndex.clear();
            users = 0;
        }
    }
}
