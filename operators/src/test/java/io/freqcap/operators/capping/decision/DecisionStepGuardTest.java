package io.freqcap.operators.capping.decision;

import static io.freqcap.schema.Configs.rule;
import static io.freqcap.schema.Configs.version;
import static io.freqcap.schema.Configs.window;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.operators.backtest.MemoryHistories;
import io.freqcap.operators.capping.CappingFixtures;
import io.freqcap.operators.capping.rule.Judging;
import io.freqcap.schema.Records;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.history.CountedHistory;
import io.freqcap.schema.history.HistoryEntry;
import io.freqcap.schema.message.InboundMessage;
import org.junit.jupiter.api.Test;

/**
 * The last guard of "no input stops the job": what the plain rule throws becomes one MALFORMED
 * outcome, and only that; a failure of state (a write) is never taken for one.
 */
class DecisionStepGuardTest {
    static final LimitConfig ONE_A_DAY = version(1).rule(rule("*", window("1d", 1))).parsed();

    /** Histories whose writes fail: the disk, say. */
    static final class FailingWrites implements Histories {
        final MemoryHistories memory = new MemoryHistories();

        @Override
        public CountedHistory get(long user) {
            return memory.get(user);
        }

        @Override
        public void count(
                long user, CountedHistory before, HistoryEntry entry, long keptMillis, long now) {
            throw new IllegalStateException("disk gone");
        }

        @Override
        public void uncount(long user, long countedAt, String messageId) {
            throw new IllegalStateException("disk gone");
        }
    }

    static InboundMessage message(String id, long user) {
        return Records.message(id, user, 1_763_798_400_000L).inbound(0);
    }

    /** User 42's message m-1 decided under {@link #ONE_A_DAY} by a step over these stores. */
    static Decided decide(Stores stores) throws Exception {
        return new DecisionStep(stores, true)
                .decide(
                        message("m-1", 42),
                        ONE_A_DAY,
                        "*",
                        "*",
                        new Judging.Times(Long.MIN_VALUE, 0));
    }

    @Test
    void whatTheRuleThrowsIsOneMalformedOutcomeAndNothingIsCounted() throws Exception {
        MemoryHistories histories = new MemoryHistories();
        Preferences poisoned =
                user ->
                        new io.freqcap.schema.preference.UserPreferences(
                                user,
                                1,
                                java.util.Set.of(),
                                CappingFixtures.THROWS,
                                null,
                                java.util.List.of(),
                                java.util.Map.of(),
                                java.util.Map.of());
        Stores stores =
                new Stores(histories, HeldQueue.NONE, poisoned, Engagements.NONE, Lifetimes.NONE);
        Decided d = decide(stores);
        assertEquals(Decision.MALFORMED, d.decision());
        assertTrue(d.undecided());
        stores.apply(d);
        assertEquals(0, histories.users(), "nothing counted");
        Stores plain = Stores.of(histories, HeldQueue.NONE);
        Decided ok = decide(plain);
        assertEquals(Decision.ALLOWED, ok.decision());
        plain.apply(ok);
        assertEquals(1, histories.users(), "counted once applied");
    }

    @Test
    void aFailingWriteIsNotTakenForTheRules() throws Exception {
        Stores stores = Stores.of(new FailingWrites(), HeldQueue.NONE);
        Decided d = decide(stores);
        assertEquals(Decision.ALLOWED, d.decision(), "deciding writes nothing");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> stores.apply(d));
        assertEquals("disk gone", e.getMessage(), "the task fails, and restores, as before");
    }
}
