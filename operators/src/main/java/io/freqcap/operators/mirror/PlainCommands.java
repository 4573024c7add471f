package io.freqcap.operators.mirror;

import io.freqcap.schema.mirror.MirrorWrite;
import io.lettuce.core.Range;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisKeyAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.api.async.RedisSortedSetAsyncCommands;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * Sends {@link MirrorCommands} as plain lettuce commands (the older {@link MirrorScript} for the
 * writes that need it), handing each command's answer to {@code sent}. Nothing is flushed here.
 */
public final class PlainCommands implements MirrorCommands.Target {
    private final RedisSortedSetAsyncCommands<String, String> sortedSets;
    private final RedisKeyAsyncCommands<String, String> keys;
    private final RedisScriptingAsyncCommands<String, String> scripting;
    private final String prefix;
    private final Consumer<RedisFuture<?>> sent;

    public PlainCommands(
            RedisSortedSetAsyncCommands<String, String> sortedSets,
            RedisKeyAsyncCommands<String, String> keys,
            RedisScriptingAsyncCommands<String, String> scripting,
            String prefix,
            Consumer<RedisFuture<?>> sent) {
        this.sortedSets = sortedSets;
        this.keys = keys;
        this.scripting = scripting;
        this.prefix = prefix;
        this.sent = sent;
    }

    @Override
    public void zadd(String key, long[] scores, String[] members, int n) {
        Object[] args = new Object[2 * n];
        for (int i = 0; i < n; i++) {
            args[2 * i] = (double) scores[i];
            args[2 * i + 1] = members[i];
        }
        sent.accept(sortedSets.zadd(key, args));
    }

    @Override
    public void zrem(String key, String[] members, int n) {
        sent.accept(
                sortedSets.zrem(key, n == members.length ? members : Arrays.copyOf(members, n)));
    }

    @Override
    public void trim(String key, long bound) {
        sent.accept(
                sortedSets.zremrangebyscore(
                        key,
                        Range.from(
                                Range.Boundary.<Long>unbounded(),
                                Range.Boundary.excluding(bound))));
    }

    @Override
    public void expireAt(String key, long epochMillis) {
        sent.accept(keys.pexpireat(key, epochMillis));
    }

    @Override
    public void script(List<MirrorWrite> writes) {
        sent.accept(
                scripting.evalsha(
                        MirrorScript.SHA1,
                        ScriptOutputType.INTEGER,
                        MirrorScript.keys(prefix, writes),
                        MirrorScript.args(writes, System.currentTimeMillis())));
    }
}
