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
 * timestamp, a held message's send time), or removes them (messages that stopped counting); removes
 * from every key members scored before the user's latest stamped timestamp minus the window
 * (contract.md §6, §7: stamped timestamps, never send times); and sets each key it added to expire
 * a window after the later of now and its highest score, so that a held message scored a week ahead
 * stays until a window after its send time. Adding or removing a member twice changes nothing, and
 * a trim only ever removes what a later stamped timestamp also removes, so replaying writes in
 * order leaves the same content.
 */
public final class MirrorScript {
    private MirrorScript() {}

    public static final String SOURCE =
            String.join(
                    "\n",
                    "local window, now = tonumber(ARGV[1]), tonumber(ARGV[2])",
                    "local a, base, total = 3, 0, 0",
                    "while a <= #ARGV do",
                    "  local nk, mode, ne = tonumber(ARGV[a]), ARGV[a + 1], tonumber(ARGV[a + 2])",
                    "  local stamped = ARGV[a + 3]",
                    "  a = a + 4",
                    "  local user = KEYS[base + 1]",
                    "  if mode == '1' then",
                    "    for i = 1, nk do redis.call('DEL', KEYS[base + i]) end",
                    "  end",
                    "  local written = {}",
                    "  for e = 1, ne do",
                    "    local k = KEYS[base + tonumber(ARGV[a])]",
                    "    if mode == '2' then",
                    "      redis.call('ZREM', user, ARGV[a + 2])",
                    "      redis.call('ZREM', k, ARGV[a + 2])",
                    "    else",
                    "      redis.call('ZADD', user, ARGV[a + 1], ARGV[a + 2])",
                    "      redis.call('ZADD', k, ARGV[a + 1], ARGV[a + 2])",
                    "      written[user] = true",
                    "      written[k] = true",
                    "    end",
                    "    a = a + 3",
                    "  end",
                    "  if stamped ~= '' then",
                    "    local bound = '(' .. string.format('%.0f', tonumber(stamped) - window)",
                    // Channel keys hold a subset of the user key's members, trimmed with it:
                    // nothing old in the user key, nothing to trim anywhere.
                    "    if redis.call('ZREMRANGEBYSCORE', user, '-inf', bound) > 0 then",
                    "      for i = 2, nk do",
                    "        redis.call('ZREMRANGEBYSCORE', KEYS[base + i], '-inf', bound)",
                    "      end",
                    "    end",
                    "  end",
                    "  for k in pairs(written) do",
                    "    local top = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')",
                    "    if top[2] ~= nil then",
                    "      local last = math.max(now, tonumber(top[2]))",
                    "      redis.call('PEXPIREAT', k, string.format('%.0f', last + window))",
                    "    end",
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
     * ARGV of one call: the window and the writer's wall clock, then per write its number of keys,
     * its kind ({@code 0} add, {@code 1} replace, {@code 2} remove), its number of messages, the
     * user's latest stamped timestamp (empty: no trim), and per message its channel key's position
     * among the write's keys (1-based, the user key being 1), timestamp and messageId. All writes
     * of one call must carry the same window.
     *
     * @param now the wall clock (epoch ms): keys expire a window after it at the earliest
     */
    public static String[] args(List<MirrorWrite> writes, long now) {
        int n = 2;
        for (MirrorWrite w : writes) {
            n += 4 + 3 * w.size();
        }
        String[] args = new String[n];
        args[0] = Long.toString(writes.get(0).windowMillis());
        args[1] = Long.toString(now);
        int a = 2;
        for (MirrorWrite w : writes) {
            if (w.windowMillis() != writes.get(0).windowMillis()) {
                throw new IllegalArgumentException("writes of one call with different windows");
            }
            args[a++] = Integer.toString(w.channels().length + 1);
            args[a++] = Integer.toString(w.kind().ordinal());
            args[a++] = Integer.toString(w.size());
            args[a++] =
                    w.latestStamped() == MirrorWrite.NO_TRIM
                            ? ""
                            : Long.toString(w.latestStamped());
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

    public static String[] args(MirrorWrite w, long now) {
        return args(List.of(w), now);
    }

    /** The SHA-1 by which {@code EVALSHA} names a script. */
    static String sha1(String s) {
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
