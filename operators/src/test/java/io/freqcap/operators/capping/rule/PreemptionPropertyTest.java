package io.freqcap.operators.capping.rule;

import static io.freqcap.operators.capping.rule.PropertyFixtures.GRID;
import static io.freqcap.operators.capping.rule.PropertyFixtures.assertReached;
import static io.freqcap.operators.capping.rule.PropertyFixtures.forEachRun;
import static io.freqcap.operators.capping.rule.PropertyFixtures.randomMessage;
import static io.freqcap.operators.capping.rule.PropertyFixtures.stamped;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.freqcap.operators.backtest.Backtest;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.message.RawRecord;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Compares preemption as the job decides it ({@link Backtest}, which runs the job's decision step
 * with its clock the latest timestamp decided, contract.md §8) with an oracle that reads
 * contract.md §3 and §6 literally: random histories of one user with priorities, {@code hold},
 * quiet hours, {@code maxHeld} and {@code preempt}, in zones with DST, half-hour and 45-minute
 * offsets. The oracle un-counts the waiting held messages of lower priority one at a time, in the
 * contract's order (lowest priority, latest send time, most recently decided), trying every grid
 * instant after each; the job bisects. Decisions, send times, violations, {@code retryAfter} and
 * the PREEMPTED messages (which, in which order) must be identical, and no interval or calendar day
 * may ever hold more than its max messages sent or to be sent.
 */
class PreemptionPropertyTest {
    static final long SEED = 20261126L;
    static final int[] PRIORITIES = {0, 10, 10, 30, 50, 80, 100};

    @Test
    void preemptionMatchesBruteForceOracle() throws Exception {
        Map<String, Integer> seen = new TreeMap<>();
        forEachRun(
                SEED,
                2000,
                PreemptionPropertyTest::randomConfig,
                (run, rnd) -> {
                    Oracle oracle = new Oracle(run.config(), run.zoneId());
                    List<String> ids = new ArrayList<>();
                    long clock = run.start();
                    int messages = 5 + rnd.nextInt(40);
                    try (Backtest job = Backtest.start(run.config(), List.of(), s -> {})) {

                        for (int i = 0; i < messages; i++) {
                            clock += rnd.nextInt(8) * GRID;
                            long t = stamped(rnd, clock);
                            // Now and then a messageId sent before (DUPLICATE, or decided anew
                            // once preempted).
                            String id =
                                    !ids.isEmpty() && rnd.nextInt(12) == 0
                                            ? ids.get(rnd.nextInt(ids.size()))
                                            : "m" + i;
                            ids.add(id);
                            OutboundMessage m = randomMessage(rnd, id, t, run.zone(), PRIORITIES);
                            Decided got = job.decide(inbound(m));
                            Oracle.Result want = oracle.decide(m, job.clock());
                            String where = oracle.base.where(run.number(), i, m);
                            SendTimePropertyTest.Oracle.assertAgrees(
                                    new SendTimePropertyTest.Oracle.Outcome(
                                            want.decision(),
                                            want.sendAt(),
                                            want.violations(),
                                            want.retryAfter()),
                                    new SendTimePropertyTest.Oracle.Outcome(
                                            got.decision(),
                                            got.verdict().sendAt(),
                                            got.verdict().violations(),
                                            got.verdict().retryAfter()),
                                    where);
                            List<String> preempted =
                                    got.preempted().stream()
                                            .map(h -> h.message().messageId())
                                            .toList();
                            assertEquals(want.preempted(), preempted, "preempted, " + where);
                            seen.merge(kind(preempted, want, got), 1, Integer::sum);
                        }
                    }
                    oracle.base.assertNoPeriodOverfilled();
                });
        assertReached(
                seen,
                30,
                "preempted one",
                "preempted several",
                "rejected with all given up",
                "maxHeld",
                "allowed",
                "rejected");
    }

    /** What became of a message: what it preempted, or why it was refused, or its decision. */
    private static String kind(List<String> preempted, Oracle.Result want, Decided got) {
        if (!preempted.isEmpty()) {
            return preempted.size() > 1 ? "preempted several" : "preempted one";
        }
        if (want.preemptFailed()) {
            return "rejected with all given up";
        }
        return got.verdict().violations().stream().anyMatch(v -> v.scope().equals(Violation.HOLD))
                ? "maxHeld"
                : got.decision().name().toLowerCase();
    }

    static InboundMessage inbound(OutboundMessage m) throws Exception {
        Map<String, Object> json = new TreeMap<>();
        json.put("messageId", m.messageId());
        json.put("userId", m.userId());
        json.put("channel", m.channel());
        json.put("timestamp", m.timestamp());
        json.put("priority", m.priority());
        if (m.timezone() != null) {
            json.put("timezone", m.timezone());
        }
        if (m.campaignId() != null) {
            json.put("campaignId", m.campaignId());
        }
        byte[] value = Json.MAPPER.writeValueAsString(json).getBytes(StandardCharsets.UTF_8);
        return InboundMessage.of(new RawRecord(null, value, "in", 0, 0));
    }

    /** A rule of {@link PropertyFixtures}' kind that preempts, and a small {@code maxHeld}. */
    static LimitConfig randomConfig(Random rnd, String zone) throws Exception {
        String rule = PropertyFixtures.randomRule(rnd);
        rule = rule.substring(0, rule.length() - 1) + ",\"preempt\":true}";
        return LimitConfig.parse(
                "{\"version\":1,\"timezone\":\""
                        + zone
                        + "\",\"maxHeld\":"
                        + (2 + rnd.nextInt(8))
                        + ",\"rules\":["
                        + rule
                        + "]}");
    }

    /**
     * contract.md §6 read literally, over {@link SendTimePropertyTest.Oracle}'s counted messages
     * (which it tries every grid instant against) and what they were held with.
     */
    static final class Oracle {
        final LimitConfig config;
        final SendTimePropertyTest.Oracle base;
        // per counted entry, beside base.counted: {priority, decided, 1 once pruned}
        final List<long[]> meta = new ArrayList<>();
        long decided;

        Oracle(LimitConfig config, ZoneId zone) {
            this.config = config;
            this.base = new SendTimePropertyTest.Oracle(config, zone);
        }

        record Result(
                Decision decision,
                Long sendAt,
                List<Violation> violations,
                Long retryAfter,
                List<String> preempted,
                boolean preemptFailed) {}

        String countedText() {
            return base.countedText();
        }

        Result decide(OutboundMessage m, long now) {
            decided++;
            if (counts(m.messageId())) {
                return new Result(Decision.DUPLICATE, null, List.of(), null, List.of(), false);
            }
            long latest = base.counted.stream().mapToLong(e -> e[2]).max().orElse(Long.MIN_VALUE);
            if (!base.counted.isEmpty() && m.timestamp() < latest - config.longestWindowMillis()) {
                return new Result(Decision.STALE, null, List.of(), null, List.of(), false);
            }
            Rule rule = config.ruleFor("*");
            Result r = ruling(rule, m, now);
            // Its rule alone (no maxHeld) rejects it; then each step is decided in full.
            if (r.decision() == Decision.REJECTED && base.rule(rule, m).sendAt() == null) {
                List<Integer> waiting = new ArrayList<>();
                for (int i = 0; i < base.counted.size(); i++) {
                    long[] e = base.counted.get(i);
                    if (e[0] > e[2]
                            && e[0] > Math.max(now, m.timestamp())
                            && meta.get(i)[0] < m.priority()) {
                        waiting.add(i);
                    }
                }
                // Lowest priority first, then latest send time, then most recently decided.
                waiting.sort(
                        Comparator.<Integer>comparingLong(i -> meta.get(i)[0])
                                .thenComparing(i -> -base.counted.get(i)[0])
                                .thenComparing(i -> -meta.get(i)[1]));
                List<Integer> given = new ArrayList<>();
                for (int i : waiting) {
                    given.add(i);
                    Result without = withoutEntries(given, () -> ruling(rule, m, now));
                    if (without.decision() == Decision.ALLOWED) {
                        List<String> preempted = new ArrayList<>();
                        for (int g : given) {
                            preempted.add(base.ids.get(g));
                        }
                        removeAll(given);
                        count(m, without.sendAt() == null ? m.timestamp() : without.sendAt());
                        return new Result(
                                Decision.ALLOWED,
                                without.sendAt(),
                                without.violations(),
                                null,
                                preempted,
                                false);
                    }
                }
                return new Result(
                        r.decision(),
                        null,
                        r.violations(),
                        r.retryAfter(),
                        List.of(),
                        !waiting.isEmpty());
            }
            if (r.decision() == Decision.ALLOWED) {
                count(m, r.sendAt() == null ? m.timestamp() : r.sendAt());
            }
            return r;
        }

        /** Whether the id is counted as far back as the history is kept (pruned as counted). */
        boolean counts(String id) {
            for (int i = 0; i < base.ids.size(); i++) {
                if (base.ids.get(i).equals(id) && meta.get(i)[2] == 0) {
                    return true;
                }
            }
            return false;
        }

        /** The rule's word at {@code now} (a shadow-free {@link SendTimePropertyTest} ruling). */
        Result ruling(Rule rule, OutboundMessage m, long now) {
            SendTimePropertyTest.Oracle.Ruling r = base.rule(rule, m);
            long t = m.timestamp();
            if (r.sendAt() == null) {
                return new Result(
                        Decision.REJECTED, null, r.violations(), r.retryAfter(), List.of(), false);
            }
            if (r.sendAt() == t) {
                return new Result(Decision.ALLOWED, null, List.of(), null, List.of(), false);
            }
            // Held: at most maxHeld waiting at now (contract.md §3).
            int waiting = 0;
            long first = Long.MAX_VALUE;
            for (long[] e : base.counted) {
                if (e[0] > e[2] && e[0] > now) {
                    waiting++;
                    first = Math.min(first, e[0]);
                }
            }
            if (waiting >= config.maxHeld()) {
                List<Violation> v = new ArrayList<>();
                boolean quietApplies =
                        rule.deferral().quietHours() != null
                                && (rule.deferral().quietHours().channels().isEmpty()
                                        || rule.deferral()
                                                .quietHours()
                                                .channels()
                                                .contains(m.channel()));
                if (quietApplies && base.quiet(rule, t)) {
                    v.add(
                            Violation.quietHours(
                                    rule.deferral().quietHours().from(),
                                    rule.deferral().quietHours().to()));
                }
                v.addAll(base.violations(rule, m, t));
                v.add(Violation.hold(config.maxHeld(), waiting));
                return new Result(Decision.REJECTED, null, v, first, List.of(), false);
            }
            // Held: what held it (contract.md §12 heldBy) are the violations at t.
            return new Result(Decision.ALLOWED, r.sendAt(), r.violations(), null, List.of(), false);
        }

        /** What {@code ruling} says with these entries un-counted; they are put back after. */
        Result withoutEntries(List<Integer> entries, java.util.function.Supplier<Result> ruling) {
            List<long[]> counted = new ArrayList<>(base.counted);
            List<String> ids = new ArrayList<>(base.ids);
            List<String> campaigns = new ArrayList<>(base.campaigns);
            List<long[]> metas = new ArrayList<>(meta);
            removeAll(entries);
            try {
                return ruling.get();
            } finally {
                base.counted.clear();
                base.counted.addAll(counted);
                base.ids.clear();
                base.ids.addAll(ids);
                base.campaigns.clear();
                base.campaigns.addAll(campaigns);
                meta.clear();
                meta.addAll(metas);
            }
        }

        void removeAll(List<Integer> entries) {
            List<Integer> desc = new ArrayList<>(entries);
            desc.sort(Comparator.reverseOrder());
            for (int i : desc) {
                base.counted.remove(i);
                base.ids.remove(i);
                base.campaigns.remove(i);
                meta.remove(i);
            }
        }

        void count(OutboundMessage m, long sendAt) {
            base.counted.add(new long[] {sendAt, base.channel(m.channel()), m.timestamp()});
            base.ids.add(m.messageId());
            base.campaigns.add(m.campaignId());
            meta.add(new long[] {m.priority(), decided, 0});
            // The job drops entries at or before the latest stamped timestamp less twice the
            // longest window kept (so their ids no longer make a DUPLICATE).
            long latest = base.counted.stream().mapToLong(e -> e[2]).max().getAsLong();
            for (int i = 0; i < base.counted.size(); i++) {
                if (base.counted.get(i)[0] <= latest - 2 * config.keptWindowMillis()) {
                    meta.get(i)[2] = 1;
                }
            }
        }
    }
}
