package io.freqcap.job;

import static io.freqcap.schema.Instants.DAY;
import static io.freqcap.schema.Instants.DAY_1_NOON;
import static io.freqcap.schema.Instants.HOUR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.job.local.EmbeddedRedis;
import io.freqcap.operators.mirror.MirrorScript;
import io.freqcap.schema.mirror.MirrorWrite;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mirror's Lua script on a real redis-server: idempotent, trims by stamped timestamps, keeps
 * held messages until a window after their send time, removes what stops counting.
 */
@Timeout(60)
class MirrorScriptITCase {
    static final long WEEK = 7 * DAY;

    @TempDir static Path dir;
    static EmbeddedRedis redis;
    static RedisClient client;
    static RedisCommands<String, String> sync;

    @BeforeAll
    static void start() throws Exception {
        redis = EmbeddedRedis.start(dir, false);
        client = RedisClient.create(redis.uri());
        sync = client.connect().sync();
        sync.scriptLoad(MirrorScript.SOURCE);
    }

    @AfterAll
    static void stop() throws Exception {
        client.shutdown();
        redis.close();
    }

    static void run(String prefix, MirrorWrite w) {
        sync.evalsha(
                MirrorScript.SHA1,
                ScriptOutputType.INTEGER,
                MirrorScript.keys(prefix, w),
                MirrorScript.args(w, System.currentTimeMillis()));
    }

    static Map<String, Long> members(String key) {
        Map<String, Long> m = new LinkedHashMap<>();
        sync.zrangeWithScores(key, 0, -1).forEach(v -> m.put(v.getValue(), (long) v.getScore()));
        return m;
    }

    @Test
    void addsToTheUserAndChannelKeysAndSetsTheirExpiry() {
        run("a", MirrorWrite.of(42, WEEK, "m-1", DAY_1_NOON, "push"));
        run("a", MirrorWrite.of(42, WEEK, "m-2", DAY_1_NOON + HOUR, "email", "push"));
        assertEquals(Map.of("m-1", DAY_1_NOON, "m-2", DAY_1_NOON + HOUR), members("a:{42}"));
        assertEquals(Map.of("m-1", DAY_1_NOON), members("a:{42}:push"));
        assertEquals(Map.of("m-2", DAY_1_NOON + HOUR), members("a:{42}:email"));
        for (String key : List.of("a:{42}", "a:{42}:push", "a:{42}:email")) {
            long ttl = sync.pttl(key);
            assertTrue(ttl > WEEK - 60_000 && ttl <= WEEK, key + " expires in " + ttl);
        }
    }

    /**
     * Contract v4 §7: a held message is scored at its send time, a week ahead; the keys are trimmed
     * by the latest stamped timestamp (not the send time), and expire a window after their highest
     * score, so a reader counting the last window sees every counted message at any moment.
     */
    @Test
    void heldMessagesAheadNeitherTrimNorExpireWhatIsCounted() {
        long now = System.currentTimeMillis();
        // m-1 sent now; m-2 stamped a minute later, held a week (a 7d/1 rule with hold 7d).
        run("h", MirrorWrite.counted(9, WEEK, now, "m-1", now, "push"));
        run("h", MirrorWrite.counted(9, WEEK, now + 60_000, "m-2", now + WEEK, "push"));
        // The config shrinks to 1d; a third message a day later: trims from its stamped time.
        run("h", MirrorWrite.counted(9, DAY, now + DAY, "m-3", now + DAY, "push"));
        assertEquals(
                Map.of("m-1", now, "m-2", now + WEEK, "m-3", now + DAY),
                members("h:{9}"),
                "nothing counted within a day of the latest stamped timestamp is trimmed");
        long ttl = sync.pttl("h:{9}:push");
        assertTrue(ttl > WEEK + DAY - 60_000, "expires a window after the send time: " + ttl);
        // Trimmed once a message stamped more than a window after them counts.
        run("h", MirrorWrite.counted(9, DAY, now + 2 * DAY + 1, "m-4", now + 2 * DAY + 1, "push"));
        assertEquals(Map.of("m-2", now + WEEK, "m-4", now + 2 * DAY + 1), members("h:{9}"));
    }

    @Test
    void aMessageThatStopsCountingIsRemovedFromBothKeys() {
        long now = System.currentTimeMillis();
        run("r", MirrorWrite.counted(3, WEEK, now, "kept", now, "push"));
        run("r", MirrorWrite.counted(3, WEEK, now, "held", now + HOUR, "sms", "push"));
        MirrorWrite removal =
                MirrorWrite.removal(3, WEEK, new String[] {"held"}, new String[] {"sms"});
        run("r", removal);
        run("r", removal);
        assertEquals(Map.of("kept", now), members("r:{3}"));
        assertEquals(0L, sync.exists("r:{3}:sms"));
        assertEquals(Map.of("kept", now), members("r:{3}:push"));
    }

    @Test
    void replayedWritesInOrderLeaveTheSameContent() {
        MirrorWrite first = MirrorWrite.of(7, WEEK, "m-1", DAY_1_NOON, "push");
        MirrorWrite late = MirrorWrite.of(7, WEEK, "m-2", DAY_1_NOON - 3 * HOUR, "push");
        MirrorWrite next = MirrorWrite.of(7, WEEK, "m-3", DAY_1_NOON + 8 * DAY, "email", "push");
        for (MirrorWrite w : List.of(first, late, next, late, first, next)) {
            run("b", w);
        }
        // m-1 and m-2 are older than the latest (m-3) minus the week: trimmed from every key.
        assertEquals(Map.of("m-3", DAY_1_NOON + 8 * DAY), members("b:{7}"));
        assertEquals(Map.of(), members("b:{7}:push"));
        assertEquals(0L, sync.exists("b:{7}:push"));
        assertEquals(Map.of("m-3", DAY_1_NOON + 8 * DAY), members("b:{7}:email"));
    }

    @Test
    void keepsAMemberExactlyOneWindowBeforeTheLatest() {
        run("c", MirrorWrite.of(1, WEEK, "edge", DAY_1_NOON, "push"));
        run("c", MirrorWrite.of(1, WEEK, "older", DAY_1_NOON - 1, "push"));
        run("c", MirrorWrite.of(1, WEEK, "latest", DAY_1_NOON + WEEK, "push"));
        assertEquals(Map.of("edge", DAY_1_NOON, "latest", DAY_1_NOON + WEEK), members("c:{1}"));
    }

    @Test
    void aRebuildReplacesTheUsersKeys() {
        run("d", MirrorWrite.of(5, WEEK, "counted", DAY_1_NOON, "push"));
        run("d", MirrorWrite.of(5, WEEK, "phantom", DAY_1_NOON + HOUR, "email", "push"));
        MirrorWrite rebuild =
                new MirrorWrite(
                        5,
                        WEEK,
                        true,
                        new String[] {"push", "email"},
                        new int[] {0, 0},
                        new long[] {DAY_1_NOON, DAY_1_NOON + 2 * HOUR},
                        new String[] {"counted", "also"});
        run("d", rebuild);
        run("d", rebuild);
        assertEquals(
                Map.of("counted", DAY_1_NOON, "also", DAY_1_NOON + 2 * HOUR), members("d:{5}"));
        assertEquals(members("d:{5}"), members("d:{5}:push"));
        assertEquals(0L, sync.exists("d:{5}:email"));
    }
}
