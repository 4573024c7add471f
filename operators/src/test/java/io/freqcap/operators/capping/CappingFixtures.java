package io.freqcap.operators.capping;

import static io.freqcap.schema.Configs.rule;
import static io.freqcap.schema.Configs.version;
import static io.freqcap.schema.Configs.window;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.operators.capping.preference.PreferenceStore;
import io.freqcap.schema.Records;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.ControlRecord;
import io.freqcap.schema.history.StoredHistory;
import io.freqcap.schema.history.StoredHistorySerializer;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.mirror.MirrorLog;
import io.freqcap.schema.preference.UserPreferences;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;

/**
 * What the capping operator's tests of several feature packages share, kept here so that no test
 * class is public only for another's sake: the contract's Berlin story, a night of held messages,
 * faults to inject, and small readers of a task's state.
 */
public final class CappingFixtures {
    private CappingFixtures() {}

    /** The contract's example config (v11): rule {@code *} holds, is quiet 21-08 and preempts. */
    public static final String PRIORITY_CONFIG =
            "{\"version\":11,\"timezone\":\"Europe/Berlin\",\"maxHeld\":20,\"rules\":["
                    + "{\"segment\":\"vip\",\"limits\":[{\"calendar\":\"day\",\"max\":3,"
                    + "\"reserve\":{\"slots\":1,\"priority\":70}},{\"window\":\"7d\",\"max\":10}],"
                    + "\"campaigns\":[{\"window\":\"7d\",\"max\":4}]},"
                    + "{\"segment\":\"*\",\"limits\":[{\"calendar\":\"day\",\"max\":1}],"
                    + "\"campaigns\":[{\"window\":\"7d\",\"max\":2}],\"hold\":\"12h\","
                    + "\"quietHours\":{\"from\":\"21:00\",\"to\":\"08:00\"},\"preempt\":true}],"
                    + "\"exempt\":[\"transactional\"]}";

    /** The story's hours in Berlin, 22 and 23 November 2025. */
    public static final long NOV_22_10H = Instant.parse("2025-11-22T09:00:00Z").toEpochMilli();

    public static final long NOV_22_22H10 = Instant.parse("2025-11-22T21:10:00Z").toEpochMilli();
    public static final long NOV_22_23H30 = Instant.parse("2025-11-22T22:30:00Z").toEpochMilli();
    public static final long NOV_23_8H = Instant.parse("2025-11-23T07:00:00Z").toEpochMilli();

    /** The contract's promotion, byte for byte as its example shows it. */
    public static InboundMessage promotion() {
        return Records.inbound(
                ("{\"messageId\":\"m-000400\",\"userId\":42,\"channel\":\"push\",\"priority\":10,"
                                + "\"campaignId\":\"weekend-promo\",\"timestamp\":1763845800000,"
                                + "\"timezone\":\"Europe/Berlin\"}")
                        .getBytes(StandardCharsets.UTF_8));
    }

    /** 22:00 in Berlin, 22 November 2025: quiet hours until 08:00. */
    public static final long NIGHT = Instant.parse("2025-11-22T21:00:00Z").toEpochMilli();

    public static final long MORNING = Instant.parse("2025-11-23T07:00:00Z").toEpochMilli();
    public static final long MINUTE = 60_000L;

    /** Berlin, quiet 21:00-08:00, hold 12h, five a day: night messages wait for the morning. */
    public static final String HOLD_TILL_MORNING =
            version(1)
                    .timezone("Europe/Berlin")
                    .rule(rule("*", window("1d", 5)).hold("12h").quietHours("21:00", "08:00"))
                    .json();

    /** The same, one a day: a second night message cannot be held. */
    public static final String ONE_A_DAY_HELD = HOLD_TILL_MORNING.replace("\"max\":5", "\"max\":1");

    /** Everyone {@code perDay} a day and 5 a week, transactional messages exempt. */
    public static String dailyConfig(long v, int perDay) {
        return version(v)
                .rule(rule("*", window("1d", perDay), window("7d", 5)))
                .exempt("transactional")
                .json();
    }

    /** The decisions of the audit records a harness emitted, in order. */
    public static List<String> auditDecisions(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h)
            throws Exception {
        List<String> out = new ArrayList<>();
        for (JsonNode a : CappingHarnesses.audits(h)) {
            out.add(a.get("decision").asText());
        }
        return out;
    }

    /** A user's short history in the task's keyed state, decoded (null: none, or a long one). */
    public static UserHistory history(KeyedBroadcastOperatorTestHarness<Long, ?, ?, ?> h, long user)
            throws Exception {
        return StoredHistorySerializer.decoded(stored(h, user));
    }

    /** The user's short history as keyed state holds it (null when none, or a long one). */
    public static StoredHistory stored(
            KeyedBroadcastOperatorTestHarness<Long, ?, ?, ?> h, long user) throws Exception {
        return CappingHarnesses.keyed(h, user, CappingFunction.HISTORY).value();
    }

    /** The messages a task holds now, as its counts say (the {@code heldNow} gauge). */
    public static long heldNow(KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h) {
        return ((CappingFunction) ((CappingOperator) h.getOperator()).getUserFunction())
                .heldSide()
                .held()
                .heldNow();
    }

    /** A push message's entry in its user's Redis log, counted at {@code score}. */
    public static MirrorLog.Entry pushEntry(long score, String messageId) {
        return new MirrorLog.Entry(score, "push", messageId);
    }

    /** The first audit record a harness emitted, which must be {@code messageId}'s. */
    public static JsonNode firstAudit(
            KeyedBroadcastOperatorTestHarness<?, ?, ?, ?> h, String messageId) throws Exception {
        JsonNode a = CappingHarnesses.audits(h).get(0);
        assertEquals(messageId, a.get("messageId").asText());
        return a;
    }

    /** Asserts an audit record's violations are {@code json}'s (contract.md §5), in order. */
    public static void assertViolations(String json, JsonNode audit) throws Exception {
        assertEquals(Json.MAPPER.readTree(json), audit.get("violations"));
    }

    /** The same, saying {@code why} when they are not. */
    public static void assertViolations(String json, JsonNode audit, String why) throws Exception {
        assertEquals(Json.MAPPER.readTree(json), audit.get("violations"), why);
    }

    /** This control record as read at {@code offset} of its partition. */
    public static ControlRecord atOffset(ControlRecord r, long offset) {
        return new ControlRecord(r.kind(), r.value(), r.topic(), r.partition(), offset);
    }

    /** A category set that throws when asked: a bug the rule meets, in place of a real one. */
    public static final Set<String> THROWS =
            new AbstractSet<>() {
                @Override
                public boolean contains(Object o) {
                    throw new IllegalStateException("a bug at an edge");
                }

                @Override
                public Iterator<String> iterator() {
                    return Collections.emptyIterator();
                }

                @Override
                public int size() {
                    return 0;
                }
            };

    /** What a write of a user's preferences meets before it reaches keyed state. */
    public interface PreferenceWrite {
        void check(UserPreferences value) throws IOException;
    }

    /**
     * A capping function under {@code config} whose users' preferences in keyed state have a fault
     * in the way (a disk gone, a bug): a read returns {@code read}'s of what the state holds, a
     * write passes {@code write} first; its store caches at most {@code cachedBytes} of them.
     */
    public static CappingFunction withFaultyPreferences(
            String config,
            UnaryOperator<UserPreferences> read,
            PreferenceWrite write,
            long cachedBytes) {
        return new CappingFunction(CappingSettings.of(config)) {
            @Override
            protected PreferenceStore preferenceStore(ValueState<UserPreferences> state) {
                return new PreferenceStore(new FaultyState(state, read, write), cachedBytes);
            }
        };
    }

    private record FaultyState(
            ValueState<UserPreferences> state,
            UnaryOperator<UserPreferences> read,
            PreferenceWrite write)
            implements ValueState<UserPreferences> {
        @Override
        public UserPreferences value() throws IOException {
            return read.apply(state.value());
        }

        @Override
        public void update(UserPreferences value) throws IOException {
            write.check(value);
            state.update(value);
        }

        @Override
        public void clear() {
            state.clear();
        }
    }
}
