package io.freqcap.operators.mirror;

import io.freqcap.schema.mirror.MirrorWrite;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * The one Lua script of the Redis mirror (contract.md §7) and its arguments. Plain Java, no Redis
 * client: what a write sends is decided here and tested on its own.
 *
 * <p>One call carries the writes of one user or, on a single Redis, of many (one call per write
 * costs Redis about 5 us more per message than sharing it among 50). Per write, KEYS hold the
 * user's key and one key per channel of the write, all under the hash tag {@code {userId}}, so in a
 * cluster, where each call carries one write, the script touches one slot. For each write the
 * script adds the messages to the user's key and their channel keys (member = messageId, score =
 * timestamp), removes from every key members older than the user's latest timestamp minus the
 * window, and sets the keys it wrote to expire after the window (a channel key not written keeps
 * the expiry of its last write, which its members are no younger than). Adding a member twice
 * changes nothing, and the trim depends only on the largest score present, so replaying writes in
 * any order leaves the same content.
 */
public final class MirrorScript {
    private MirrorScript() {}

    public static final String SOURCE =
            String.join(
                    "\n",
                    "local window = tonumber(ARGV[1])",
                    "local a, base, total = 2, 0, 0",
                    "while a <= #ARGV do",
                    "  local nk, replace, ne = tonumber(ARGV[a]), ARGV[a + 1], tonumber(ARGV[a + 2])",
                    "  a = a + 3",
                    "  local user = KEYS[base + 1]",
                    "  if replace == '1' then",
                    "    for i = 1, nk do redis.call('DEL', KEYS[base + i]) end",
                    "  end",
                    "  local written = {}",
                    "  for e = 1, ne do",
                    "    local k = KEYS[base + tonumber(ARGV[a])]",
                    "    redis.call('ZADD', user, ARGV[a + 1], ARGV[a + 2])",
                    "    redis.call('ZADD', k, ARGV[a + 1], ARGV[a + 2])",
                    "    written[k] = true",
                    "    a = a + 3",
                    "  end",
                    "  local top = redis.call('ZRANGE', user, -1, -1, 'WITHSCORES')",
                    "  if top[2] ~= nil then",
                    "    local bound = '(' .. string.format('%.0f', tonumber(top[2]) - window)",
                    // Channel keys hold a subset of the user key's members, trimmed with it:
                    // nothing old in the user key, nothing to trim anywhere.
                    "    if redis.call('ZREMRANGEBYSCORE', user, '-inf', bound) > 0 then",
                    "      for i = 2, nk do",
                    "        redis.call('ZREMRANGEBYSCORE', KEYS[base + i], '-inf', bound)",
                    "      end",
                    "    end",
                    "    redis.call('PEXPIRE', user, window)",
                    "    for k in pairs(written) do redis.call('PEXPIRE', k, window) end",
                    "  end",
                    "  base, total = base + nk, total + ne",
                    "end",
                    "return total",
                    "");

    /** The SHA-1 EVALSHA names the script by; the same as SCRIPT LOAD answers. */
    public static final String SHA1 = sha1(SOURCE);

    /** KEYS of one call: per write, the user's key, then its channel keys. */
    public static String[] keys(String prefix, List<MirrorWrite> writes) {
        int n = 0;
        for (MirrorWrite w : writes) {
            n += w.channels().length + 1;
        }
        String[] keys = new String[n];
        int k = 0;
        for (MirrorWrite w : writes) {
            keys[k++] = MirrorWrite.userKey(prefix, w.userId());
            for (String c : w.channels()) {
                keys[k++] = MirrorWrite.channelKey(prefix, w.userId(), c);
            }
        }
        return keys;
    }

    /**
     * ARGV of one call: the window, then per write its number of keys, {@code 1} to replace or
     * {@code 0}, its number of messages, and per message its channel key's position among the
     * write's keys (1-based, the user key being 1), timestamp and messageId. All writes of one call
     * must carry the same window.
     */
    public static String[] args(List<MirrorWrite> writes) {
        int n = 1;
        for (MirrorWrite w : writes) {
            n += 3 + 3 * w.size();
        }
        String[] args = new String[n];
        args[0] = Long.toString(writes.get(0).windowMillis());
        int a = 1;
        for (MirrorWrite w : writes) {
            if (w.windowMillis() != writes.get(0).windowMillis()) {
                throw new IllegalArgumentException("writes of one call with different windows");
            }
            args[a++] = Integer.toString(w.channels().length + 1);
            args[a++] = w.replace() ? "1" : "0";
            args[a++] = Integer.toString(w.size());
            for (int i = 0; i < w.size(); i++) {
                args[a++] = Integer.toString(w.channelOf()[i] + 2);
                args[a++] = Long.toString(w.timestamps()[i]);
                args[a++] = w.messageIds()[i];
            }
        }
        return args;
    }

    public static String[] keys(String prefix, MirrorWrite w) {
        return keys(prefix, List.of(w));
    }

    public static String[] args(MirrorWrite w) {
        return args(List.of(w));
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
