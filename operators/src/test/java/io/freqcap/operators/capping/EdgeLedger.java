package io.freqcap.operators.capping;

import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.message.OutboundMessage;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the outputs of an {@link EdgeRun} so far say: per message its inputs, final outcomes and
 * held copies waiting, each user's counted messages, the configs in force and the held topic as a
 * compacted topic keeps it. Rolled back with the job when it restarts after a crash ({@link
 * #copy}).
 */
final class EdgeLedger {
    /** A held message waiting: what its input said, and its send time as held state has it. */
    record Held(
            long user,
            String messageId,
            String channel,
            String category,
            String campaign,
            long timestamp,
            long sendAt) {}

    /** Per user and messageId: messages read, final outcomes seen, held ones waiting. */
    static final class Pair {
        int inputs;
        int finals;
        final Deque<Held> waiting = new ArrayDeque<>();

        Pair copy() {
            Pair p = new Pair();
            p.inputs = inputs;
            p.finals = finals;
            p.waiting.addAll(waiting);
            return p;
        }
    }

    /**
     * A counted message: its send time (its timestamp, unless held), its scopes, and the config and
     * segment whose rule admitted it.
     */
    record Counted(
            String messageId,
            long at,
            String channel,
            String category,
            String campaign,
            long configVersion,
            String segment,
            int offsetSeconds,
            long timestamp,
            long seq) {}

    /** How many messages were counted so far: each counted one's {@link Counted#seq}. */
    long seq;

    /** The {@link #seq} from which lifetime counts are kept: a lifetime config came into force. */
    long countingFrom = Long.MAX_VALUE;

    /** {@code --lifetime-retention}. */
    long lifetimeRetention;

    /** Each campaign's {@code end-campaign}s, as the {@link #seq} they came at. */
    final Map<String, List<Long>> ended = new HashMap<>();

    /**
     * Users and campaigns ("user campaign") whose job's count lost a message the ledger never had:
     * one un-counted that was counted before counting began or before an {@code end-campaign} (§3:
     * an un-count takes one whenever it was counted, never below 0).
     */
    final java.util.Set<String> uncountedAcross = new java.util.HashSet<>();

    /**
     * A config came into force: lifetime counts are kept from now on if it has a lifetime limit.
     */
    void inForce(LimitConfig c) {
        inForce = c;
        configs.put(c.version(), c);
        if (c.hasLifetime() && countingFrom == Long.MAX_VALUE) {
            countingFrom = seq;
        }
    }

    /** The last {@code end-campaign} of {@code campaign} before {@code seq}, or -1. */
    long endedBefore(String campaign, long seq) {
        long last = -1;
        for (long at : ended.getOrDefault(campaign, List.of())) {
            if (at <= seq) {
                last = Math.max(last, at);
            }
        }
        return last;
    }

    final Map<String, Pair> pairs = new HashMap<>();
    final Map<Long, Integer> waitingByUser = new HashMap<>();
    final Map<Long, Long> preferenceVersions = new HashMap<>();

    /** Users that had a message held: their held state is compared with what waits. */
    final java.util.Set<Long> heldUsers = new java.util.HashSet<>();

    /** Each user's counted messages, by the outputs: ALLOWED ones, until withdrawn. */
    final Map<Long, List<Counted>> counted = new HashMap<>();

    /** Every config that was in force, by version. */
    final Map<Long, LimitConfig> configs = new HashMap<>();

    LimitConfig inForce;

    /**
     * The held-messages topic as a compacted topic keeps it (§12): each key's latest notice,
     * tombstoned keys removed. Rolled back with the rest: the sinks' transactions abort.
     */
    final Map<String, String> heldTopic = new java.util.TreeMap<>();

    EdgeLedger copy() {
        EdgeLedger l = new EdgeLedger();
        l.heldTopic.putAll(heldTopic);
        l.heldUsers.addAll(heldUsers);
        counted.forEach((u, list) -> l.counted.put(u, new ArrayList<>(list)));
        l.configs.putAll(configs);
        pairs.forEach((k, v) -> l.pairs.put(k, v.copy()));
        l.waitingByUser.putAll(waitingByUser);
        l.preferenceVersions.putAll(preferenceVersions);
        l.inForce = inForce;
        l.seq = seq;
        l.countingFrom = countingFrom;
        l.lifetimeRetention = lifetimeRetention;
        ended.forEach((c, list) -> l.ended.put(c, new ArrayList<>(list)));
        l.uncountedAcross.addAll(uncountedAcross);
        return l;
    }

    /** Counts a message ALLOWED (at its send time when held) under the config it names. */
    void count(OutboundMessage m, long at, long configVersion, String segment) {
        LimitConfig config = configs.get(configVersion);
        // Its local time as its calendar limits read it: its own zone, else the config's (§3).
        int offset =
                io.freqcap.schema.common.Zones.offsetSeconds(
                        m.timezone(), config == null ? "UTC" : config.timezone(), at);
        counted.computeIfAbsent(m.userId(), u -> new ArrayList<>())
                .add(
                        new Counted(
                                m.messageId(),
                                at,
                                m.channel(),
                                m.category(),
                                m.campaignId(),
                                configVersion,
                                segment,
                                offset,
                                m.timestamp(),
                                seq++));
    }

    /** Un-counts a message (at {@code at}, or at any time for {@code Long.MIN_VALUE}). */
    void uncount(long user, String messageId, long at) {
        List<Counted> list = counted.get(user);
        if (list != null) {
            list.removeIf(
                    c -> {
                        boolean gone =
                                c.messageId().equals(messageId)
                                        && (at == Long.MIN_VALUE || c.at() == at);
                        if (gone
                                && c.campaign() != null
                                && (c.seq() < countingFrom
                                        || endedBefore(c.campaign(), seq) > c.seq())) {
                            uncountedAcross.add(user + " " + c.campaign());
                        }
                        return gone;
                    });
        }
    }

    /** The message waiting under {@code key} has left (its final outcome); broken if none waits. */
    Held endWaiting(String key, String brokenIfNone) {
        Pair p = pairs.get(key);
        if (p == null || p.waiting.isEmpty()) {
            throw new EdgeRun.Broken(brokenIfNone, key);
        }
        Held h = p.waiting.poll();
        p.finals++;
        waitingByUser.merge(h.user(), -1, Integer::sum);
        return h;
    }
}
