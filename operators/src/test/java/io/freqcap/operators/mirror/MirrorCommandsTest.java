package io.freqcap.operators.mirror;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.freqcap.schema.mirror.MirrorWrite;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class MirrorCommandsTest {
    static final long DAY = 86_400_000L;
    static final long NOW = 1_000 * DAY;

    /** The commands, one line each. */
    static List<String> commands(List<MirrorWrite> batch) {
        List<String> out = new ArrayList<>();
        MirrorCommands.send(
                "fc",
                batch,
                NOW,
                50,
                new MirrorCommands.Target() {
                    @Override
                    public void zadd(String key, long[] scores, String[] members, int n) {
                        List<String> pairs = new ArrayList<>();
                        for (int i = 0; i < n; i++) {
                            pairs.add(scores[i] + " " + members[i]);
                        }
                        out.add("ZADD " + key + " " + String.join(" ", pairs));
                    }

                    @Override
                    public void zrem(String key, String[] members, int n) {
                        out.add("ZREM " + key + " " + String.join(" ", Arrays.copyOf(members, n)));
                    }

                    @Override
                    public void trim(String key, long bound) {
                        out.add("TRIM " + key + " " + bound);
                    }

                    @Override
                    public void expireAt(String key, long epochMillis) {
                        out.add("PEXPIREAT " + key + " " + epochMillis);
                    }

                    @Override
                    public void script(List<MirrorWrite> writes) {
                        out.add("EVALSHA " + writes.size());
                    }
                });
        return out;
    }

    static MirrorWrite counted(long window, long stamped, String id, long t, String... channels) {
        return MirrorWrite.counted(
                        7,
                        window,
                        stamped,
                        id,
                        t,
                        channels[0],
                        Arrays.copyOfRange(channels, 1, channels.length))
                .withHighestScore(t);
    }

    @Test
    void aUsersWritesOfABatchAreOneZaddPerKeyOneTrimAndOneExpiry() {
        long t = 100 * DAY;
        assertEquals(
                List.of(
                        "ZADD fc:{7} " + t + " a " + (t + 1) + " b",
                        "ZADD fc:{7}:push " + t + " a",
                        "ZADD fc:{7}:email " + (t + 1) + " b",
                        "TRIM fc:{7} " + (t + 1 - DAY),
                        "TRIM fc:{7}:email " + (t + 1 - DAY),
                        "TRIM fc:{7}:push " + (t + 1 - DAY),
                        "PEXPIREAT fc:{7} " + (NOW + DAY),
                        "PEXPIREAT fc:{7}:push " + (NOW + DAY),
                        "PEXPIREAT fc:{7}:email " + (NOW + DAY)),
                commands(
                        List.of(
                                counted(DAY, MirrorWrite.NO_TRIM, "a", t, "push"),
                                counted(DAY, t + 1, "b", t + 1, "email", "push"))));
    }

    /**
     * A longer window in force between two writes of a user: each trims by its own, in order (the
     * first's bound would remove the second's late member).
     */
    @Test
    void aWindowChangeInABatchKeepsEachWritesOwnTrim() {
        long t = 100 * DAY;
        List<String> c =
                commands(
                        List.of(
                                counted(DAY, t, "a", t, "push"),
                                counted(7 * DAY, t, "late", t - DAY / 2, "push")));
        assertEquals(
                List.of(
                        "ZADD fc:{7} " + t + " a",
                        "ZADD fc:{7}:push " + t + " a",
                        "TRIM fc:{7} " + (t - DAY),
                        "TRIM fc:{7}:push " + (t - DAY),
                        "PEXPIREAT fc:{7} " + (NOW + DAY),
                        "PEXPIREAT fc:{7}:push " + (NOW + DAY),
                        "ZADD fc:{7} " + (t - DAY / 2) + " late",
                        "ZADD fc:{7}:push " + (t - DAY / 2) + " late",
                        "TRIM fc:{7} " + (t - 7 * DAY),
                        "TRIM fc:{7}:push " + (t - 7 * DAY),
                        "PEXPIREAT fc:{7} " + (NOW + 7 * DAY),
                        "PEXPIREAT fc:{7}:push " + (NOW + 7 * DAY)),
                c);
    }

    /** A user's removal, rebuild or unknown-score write goes after what the batch added before. */
    @Test
    void aUsersWritesKeepTheirOrderAcrossKinds() {
        long t = 100 * DAY;
        MirrorWrite removal =
                MirrorWrite.removal(7, DAY, new String[] {"a"}, new String[] {"push"});
        MirrorWrite restored = MirrorWrite.counted(7, DAY, t, "c", t, "push");
        List<String> c =
                commands(
                        List.of(
                                counted(DAY, MirrorWrite.NO_TRIM, "a", t, "push"),
                                removal,
                                restored,
                                counted(DAY, MirrorWrite.NO_TRIM, "d", t, "push")));
        assertEquals(
                List.of(
                        "ZADD fc:{7} " + t + " a",
                        "ZADD fc:{7}:push " + t + " a",
                        "PEXPIREAT fc:{7} " + (NOW + DAY),
                        "PEXPIREAT fc:{7}:push " + (NOW + DAY),
                        "ZREM fc:{7} a",
                        "ZREM fc:{7}:push a",
                        "EVALSHA 1",
                        "ZADD fc:{7} " + t + " d",
                        "ZADD fc:{7}:push " + t + " d",
                        "PEXPIREAT fc:{7} " + (NOW + DAY),
                        "PEXPIREAT fc:{7}:push " + (NOW + DAY)),
                c);
    }

    /** A user's many members in one batch: no command carries more than Lua can unpack. */
    @Test
    void scriptCallsCutLongCommands() {
        int n = 2_500;
        long[] ts = new long[n];
        String[] ids = new String[n];
        for (int i = 0; i < n; i++) {
            ts[i] = 100 * DAY + i;
            ids[i] = "h-" + i;
        }
        MirrorWrite w =
                new MirrorWrite(
                        7,
                        DAY,
                        MirrorWrite.Kind.ADD,
                        MirrorWrite.NO_TRIM,
                        new String[] {"push"},
                        new int[n],
                        ts,
                        ids,
                        ts[n - 1]);
        List<Integer> zaddMembers = new ArrayList<>();
        List<Integer> callArgs = new ArrayList<>();
        CommandScript.Calls calls =
                new CommandScript.Calls(
                        50,
                        (keys, args) -> {
                            callArgs.add(args.length);
                            for (int a = 0; a < args.length; ) {
                                int c = Integer.parseInt(args[a + 2]);
                                if (args[a].equals("ZADD")) {
                                    zaddMembers.add(c / 2);
                                }
                                a += 3 + c;
                            }
                        },
                        writes -> {});
        MirrorCommands.send("fc", List.of(w), NOW, 50, calls);
        calls.flush();
        assertEquals(List.of(1000, 1000, 500, 1000, 1000, 500), zaddMembers);
        assertEquals(1, callArgs.size());
    }
}
