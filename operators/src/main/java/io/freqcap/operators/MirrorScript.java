package io.freqcap.operators;

import io.freqcap.schema.MirrorWrite;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The one Lua script of the Redis mirror (SPEC §7) and its arguments. Plain Java, no Redis client:
 * what a write sends is decided here and tested on its own.
 *
 * <p>KEYS are the user's key and one key per channel of the write, all under the hash tag {@code
 * {userId}}, so in a cluster the script touches one slot. ARGV: the longest window in force (ms),
 * {@code 1} to replace the user's keys (rebuild) or {@code 0}, then per counted message its
 * channel's position in KEYS, its timestamp and its messageId. The script adds the messages to the
 * user's key and their channel keys (member = messageId, score = timestamp), removes from every key
 * members older than the user's latest timestamp minus the window, and sets each key to expire
 * after the window. Adding a member twice changes nothing, and the trim depends only on the largest
 * score present, so replaying writes in any order leaves the same content.
 */
public final class MirrorScript {
    private MirrorScript() {}

    public static final String SOURCE =
            String.join(
                    "\n",
                    "local window = tonumber(ARGV[1])",
                    "if ARGV[2] == '1' then redis.call('DEL', unpack(KEYS)) end",
                    "for i = 3, #ARGV, 3 do",
                    "  redis.call('ZADD', KEYS[1], ARGV[i + 1], ARGV[i + 2])",
                    "  redis.call('ZADD', KEYS[tonumber(ARGV[i])], ARGV[i + 1], ARGV[i + 2])",
                    "end",
                    "local top = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')",
                    "if top[2] == nil then return 0 end",
                    "local cutoff = '(' .. string.format('%.0f', tonumber(top[2]) - window)",
                    "for i = 1, #KEYS do",
                    "  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', cutoff)",
                    "  redis.call('PEXPIRE', KEYS[i], window)",
                    "end",
                    "return (#ARGV - 2) / 3",
                    "");

    /** The SHA-1 EVALSHA names the script by; the same as SCRIPT LOAD answers. */
    public static final String SHA1 = sha1(SOURCE);

    public static String[] keys(String prefix, MirrorWrite w) {
        String[] keys = new String[w.channels().length + 1];
        keys[0] = MirrorWrite.userKey(prefix, w.userId());
        for (int c = 0; c < w.channels().length; c++) {
            keys[c + 1] = MirrorWrite.channelKey(prefix, w.userId(), w.channels()[c]);
        }
        return keys;
    }

    public static String[] args(MirrorWrite w) {
        String[] args = new String[2 + 3 * w.size()];
        args[0] = Long.toString(w.windowMillis());
        args[1] = w.replace() ? "1" : "0";
        for (int i = 0; i < w.size(); i++) {
            // KEYS is 1-based in Lua and KEYS[1] is the user's key.
            args[2 + 3 * i] = Integer.toString(w.channelOf()[i] + 2);
            args[3 + 3 * i] = Long.toString(w.timestamps()[i]);
            args[4 + 3 * i] = w.messageIds()[i];
        }
        return args;
    }

    private static String sha1(String s) {
        try {
            return HexFormat.of()
                    .formatHex(
                            MessageDigest.getInstance("SHA-1")
                                    .digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
