package io.freqcap.operators.mirror;

import io.freqcap.schema.mirror.MirrorWrite;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;

/**
 * One command of a mirror write ({@code SET key log PXAT expireAt}, {@code DEL key...}), handed to
 * lettuce with the rest of its batch in one {@code dispatch}: no promise, no timer and no write
 * task per command (lettuce's async API costs the job about 2.5 µs of CPU a command in those). The
 * writer polls {@link #isDone} and times the batch out itself ({@link RedisChannel}).
 */
final class MirrorCommand extends Command<String, byte[], Object> {
    @SuppressWarnings({"unchecked", "rawtypes"})
    private MirrorCommand(CommandType type, Object output, CommandArgs<String, byte[]> args) {
        super(type, (io.lettuce.core.output.CommandOutput) output, args);
    }

    /** {@code SET key log PXAT expireAt}. */
    static MirrorCommand set(RedisCodec<String, byte[]> codec, String key, MirrorWrite w) {
        return new MirrorCommand(
                CommandType.SET,
                new StatusOutput<>(codec),
                new CommandArgs<>(codec)
                        .addKey(key)
                        .addValue(w.log())
                        .add("PXAT")
                        .add(w.expireAt()));
    }

    /** {@code DEL key...}. */
    static MirrorCommand del(RedisCodec<String, byte[]> codec, String... keys) {
        return new MirrorCommand(
                CommandType.DEL,
                new IntegerOutput<>(codec),
                new CommandArgs<>(codec).addKeys(keys));
    }

    /** Why it failed (an error reply, a lost connection, a time-out), or null. */
    String failure() {
        if (exception != null) {
            return exception.toString();
        }
        return getOutput() == null ? null : getOutput().getError();
    }
}
