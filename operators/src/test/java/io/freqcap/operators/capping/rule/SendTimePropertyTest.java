package io.freqcap.operators.capping.rule;

import static io.freqcap.operators.capping.rule.PropertyFixtures.GRID;
import static io.freqcap.operators.capping.rule.PropertyFixtures.assertReached;
import static io.freqcap.operators.capping.rule.PropertyFixtures.forEachRun;
import static io.freqcap.operators.capping.rule.PropertyFixtures.randomMessage;
import static io.freqcap.operators.capping.rule.PropertyFixtures.stamped;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.config.Fatigue;
import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Violation;
import io.freqcap.schema.history.UserHistory;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.preference.UserPreferences;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Compares {@link CappingRule} with a brute-force oracle written from contract.md §3 and §6 for
 * rules with {@code hold} and {@code quietHours}: random histories of one user in zones with DST,
 * half-hour and 45-minute offsets, each run starting near one of its zone's DST changes. Send
 * times, decisions, violations, {@code retryAfter} and shadow decisions must be identical, and no
 * interval or calendar day may ever hold more than its max messages sent or to be sent.
 *
 * <p>The oracle tries every instant on a grid. Timestamps, windows, holds and quiet hours are whole
 * multiples of {@link PropertyFixtures#GRID}, and so are the zones' offsets and changes, so what a
 * limit counts and whether a time is quiet are the same between two grid instants: trying the grid
 * is trying every instant.
 */
class SendTimePropertyTest {
    static final long SEED = 20261125L;

    @Test
    void sendTimesMatchBruteForceOracleAcrossDstChanges() throws Exception {
        Map<String, Integer> seen = new TreeMap<>();
        forEachRun(
                SEED,
                1500,
                PropertyFixtures::randomConfig,
                (run, rnd) -> {
                    LimitConfig config = run.config();
                    Oracle oracle = new Oracle(config, run.zoneId());
                    UserHistory history = UserHistory.EMPTY;
                    long clock = run.start();
                    int messages = 5 + rnd.nextInt(25);
                    for (int i = 0; i < messages; i++) {
                        clock += rnd.nextInt(12) * GRID;
                        OutboundMessage m =
                                randomMessage(rnd, "m" + i, stamped(rnd, clock), run.zone());
                        RuleStep.Result got =
                                RuleStep.decide(history, m, config, LimitConfig.DEFAULT_SEGMENT);
                        Oracle.Result want = oracle.decide(m);
                        String where = oracle.where(run.number(), i, m);
                        Oracle.assertAgrees(want, got, where);
                        if (config.hasShadow() && want.decision() != Decision.STALE) {
                            Oracle.assertShadowAgrees(want, got, where);
                            seen.merge("shadow " + want.shadow(), 1, Integer::sum);
                        }
                        seen.merge(kind(got), 1, Integer::sum);
                        for (Violation x : got.violations()) {
                            if (x instanceof Violation.Exceeded v
                                    && v.scope().equals("campaigns")) {
                                seen.merge(
                                        v.calendar() != null
                                                ? "campaigns a day"
                                                : "campaigns rolling",
                                        1,
                                        Integer::sum);
                            }
                        }
                        history = got.history();
                    }
                    oracle.assertNoPeriodOverfilled();
                });
        assertReached(
                seen,
                200,
                "held",
                "rejected quiet",
                "rejected limits",
                "allowed",
                "shadow HELD",
                "shadow REJECTED",
                "campaigns a day",
                "campaigns rolling");
    }

    /** What became of a message: held, rejected in quiet hours or by limits, or its decision. */
    private static String kind(RuleStep.Result got) {
        if (got.sendAt() != null) {
            return "held";
        }
        if (got.decision() == Decision.REJECTED) {
            return got.violations().get(0).isQuietHours() ? "rejected quiet" : "rejected limits";
        }
        return got.decision().name().toLowerCase();
    }

    /** contract.md §3 and §6 read literally, for one user whose messages are in one zone. */
    static final class Oracle {
        final LimitConfig config;
        final ZoneId zone;
        final List<long[]> counted = new ArrayList<>(); // {send time, channel index, stamped}
        final List<String> ids = new ArrayList<>();
        final List<String> campaigns = new ArrayList<>(); // of each counted entry, or null

        /** The user's preferences (contract.md §10), or null. */
        UserPreferences prefs;

        /** The user's last engagement (contract.md §11), MIN_VALUE for none. */
        long lastEngagement = Long.MIN_VALUE;

        Oracle(LimitConfig config, ZoneId zone) {
            this.config = config;
            this.zone = zone;
        }

        record Result(
                Decision decision,
                Long sendAt,
                List<Violation> violations,
                Long retryAfter,
                String shadow,
                Long shadowSendAt,
                List<Violation> shadowViolations) {}

        /** What a rule says: a send time (null: rejected), violations at t, retryAfter. */
        record Ruling(Long sendAt, List<Violation> violations, Long retryAfter) {}

        /** What a decision under test and the oracle both say of a message. */
        record Outcome(
                Decision decision, Long sendAt, List<Violation> violations, Long retryAfter) {}

        /** Asserts the decision under test agrees with the oracle, field by field. */
        static void assertAgrees(Outcome want, Outcome got, String where) {
            assertEquals(want.decision(), got.decision(), where);
            assertEquals(want.sendAt(), got.sendAt(), "send time, " + where);
            assertEquals(want.violations(), got.violations(), "violations, " + where);
            assertEquals(want.retryAfter(), got.retryAfter(), "retryAfter, " + where);
        }

        /** The same, for the rule's own step and the oracle's result. */
        static void assertAgrees(Result want, RuleStep.Result got, String where) {
            assertAgrees(
                    new Outcome(
                            want.decision(), want.sendAt(), want.violations(), want.retryAfter()),
                    new Outcome(got.decision(), got.sendAt(), got.violations(), got.retryAfter()),
                    where);
        }

        /** The same for the shadow decision (a config's with a shadow; STALE has none). */
        static void assertShadowAgrees(Result want, RuleStep.Result got, String where) {
            assertEquals(want.shadow(), got.shadow().label(), "shadow, " + where);
            assertEquals(want.shadowSendAt(), got.shadow().sendAt(), "shadow, " + where);
            assertEquals(want.shadowViolations(), got.shadow().violations(), "shadow " + where);
        }

        /**
         * Where a property test's run stands, for its failure messages: the run, the zone, the
         * message, the config, what else is given, and what the oracle counted.
         */
        String where(int run, int i, OutboundMessage m, Object... more) {
            StringBuilder b = new StringBuilder("run ").append(run);
            b.append(" (").append(zone).append("), message ").append(i).append(' ').append(m);
            b.append(' ').append(config.json());
            for (Object o : more) {
                b.append(' ').append(o);
            }
            return b.append(" counted ").append(countedText()).toString();
        }

        String countedText() {
            StringBuilder b = new StringBuilder();
            for (long[] e : counted) {
                b.append(Instant.ofEpochMilli(e[0]).atZone(zone).toLocalDateTime())
                        .append(e[1] == 0 ? " push, " : " email, ");
            }
            return b.toString();
        }

        Result decide(OutboundMessage m) {
            // STALE reads the timestamps messages were stamped with, never send times (§6).
            long latest = latestStamped();
            if (ids.contains(m.messageId())) {
                return new Result(Decision.DUPLICATE, null, List.of(), null, null, null, null);
            }
            if (!counted.isEmpty() && m.timestamp() < latest - config.longestWindowMillis()) {
                return new Result(Decision.STALE, null, List.of(), null, null, null, null);
            }
            Ruling r = rule(config.ruleFor("*"), m);
            Ruling s = config.hasShadow() ? rule(config.shadowRuleFor("*"), m) : null;
            String shadow =
                    s == null
                            ? null
                            : s.sendAt() == null
                                    ? "REJECTED"
                                    : s.sendAt() == m.timestamp() ? "ALLOWED" : "HELD";
            Long shadowSendAt =
                    s == null || s.sendAt() == null || s.sendAt() == m.timestamp()
                            ? null
                            : s.sendAt();
            List<Violation> shadowViolations =
                    s == null ? null : s.sendAt() == null ? s.violations() : List.of();
            if (r.sendAt() == null) {
                return new Result(
                        Decision.REJECTED,
                        null,
                        r.violations(),
                        r.retryAfter(),
                        shadow,
                        shadowSendAt,
                        shadowViolations);
            }
            counted.add(new long[] {r.sendAt(), channel(m.channel()), m.timestamp()});
            ids.add(m.messageId());
            campaigns.add(m.campaignId());
            return new Result(
                    Decision.ALLOWED,
                    r.sendAt() == m.timestamp() ? null : r.sendAt(),
                    // held: what held it (contract.md §12 heldBy), the violations at t
                    r.sendAt() == m.timestamp() ? List.of() : r.violations(),
                    null,
                    shadow,
                    shadowSendAt,
                    shadowViolations);
        }

        /** The latest timestamp a counted message was stamped with; none: MIN_VALUE. */
        long latestStamped() {
            return counted.stream().mapToLong(e -> e[2]).max().orElse(Long.MIN_VALUE);
        }

        /**
         * The index of a counted message a failed receipt may name at {@code clock}, or -1: one
         * already sent, never the one stamped latest (PreferencePropertyTest says why).
         */
        int receiptTarget(Random rnd, long clock) {
            int k = rnd.nextInt(counted.size());
            return counted.get(k)[0] <= clock && counted.get(k)[2] < latestStamped() ? k : -1;
        }

        /** Un-counts the message a failed receipt names (contract.md §11). */
        void uncount(String messageId) {
            int i = ids.lastIndexOf(messageId);
            counted.remove(i);
            ids.remove(i);
            campaigns.remove(i);
        }

        long pausedUntil() {
            return prefs == null || prefs.pausedUntil() == null
                    ? Long.MIN_VALUE
                    : prefs.pausedUntil();
        }

        Ruling rule(Rule configured, OutboundMessage m) {
            long t = m.timestamp();
            Rule rule = fatigued(configured, t);
            boolean quietApplies =
                    rule.deferral().quietHours() != null
                            && (rule.deferral().quietHours().channels().isEmpty()
                                    || rule.deferral()
                                            .quietHours()
                                            .channels()
                                            .contains(m.channel()));
            boolean quietNow = quietApplies && quiet(rule, t);
            long pausedUntil = pausedUntil();
            if (prefs != null && prefs.optOutChannels().contains(m.channel())) {
                // §10: never held, no retryAfter; and whatever else it breaks at t
                List<Violation> v = new ArrayList<>();
                v.add(Violation.optedOutOfChannel(m.channel()));
                if (quietNow) {
                    v.add(
                            Violation.quietHours(
                                    rule.deferral().quietHours().from(),
                                    rule.deferral().quietHours().to()));
                }
                if (t < pausedUntil) {
                    v.add(Violation.paused(pausedUntil));
                }
                v.addAll(violations(rule, m, t));
                return new Ruling(null, v, null);
            }
            boolean zero =
                    limits(rule, m).stream().anyMatch(l -> l.max() - kept(l, m) == 0)
                            || (m.campaignId() != null
                                    && rule.caps().campaigns().stream()
                                            .anyMatch(l -> l.max() - kept(l, m) == 0));
            Long first = null;
            if (!zero) {
                // The first grid instant outside quiet hours and the pause at which every limit
                // passes.
                for (long at = t; ; at += GRID) {
                    if (!(quietApplies && quiet(rule, at))
                            && at >= pausedUntil
                            && violations(rule, m, at).isEmpty()) {
                        first = at;
                        break;
                    }
                }
            }
            if (first != null && first == t) {
                return new Ruling(t, List.of(), null);
            }
            // Held or rejected, the violations at t: what held it (§12 heldBy), or rejects it.
            List<Violation> v = new ArrayList<>();
            if (quietNow) {
                v.add(
                        Violation.quietHours(
                                rule.deferral().quietHours().from(),
                                rule.deferral().quietHours().to()));
            }
            if (t < pausedUntil) {
                v.add(Violation.paused(pausedUntil));
            }
            v.addAll(violations(rule, m, t));
            if (first != null && first - t <= rule.deferral().holdMillis()) {
                return new Ruling(first, v, null);
            }
            return new Ruling(null, v, first);
        }

        boolean quiet(Rule rule, long at) {
            LocalTime local = Instant.ofEpochMilli(at).atZone(zone).toLocalTime();
            LocalTime from = LocalTime.parse(rule.deferral().quietHours().from());
            LocalTime to = LocalTime.parse(rule.deferral().quietHours().to());
            return from.isBefore(to)
                    ? !local.isBefore(from) && local.isBefore(to)
                    : !local.isBefore(from) || local.isBefore(to);
        }

        List<Limit> limits(Rule rule, OutboundMessage m) {
            List<Limit> all = new ArrayList<>(rule.caps().all());
            all.addAll(rule.channelLimits(m.channel()));
            if (prefs != null) {
                all.addAll(prefs.limits());
                all.addAll(prefs.channels().getOrDefault(m.channel(), List.of()));
            }
            return all;
        }

        List<Violation> violations(Rule rule, OutboundMessage m, long at) {
            List<Violation> out = new ArrayList<>();
            int p = m.priority();
            check(out, "all", rule.caps().all(), at, -1, p);
            check(
                    out,
                    "channel:" + m.channel(),
                    rule.channelLimits(m.channel()),
                    at,
                    channel(m.channel()),
                    p);
            if (prefs != null) {
                check(out, "preference:all", prefs.limits(), at, -1, p);
                check(
                        out,
                        "preference:channel:" + m.channel(),
                        prefs.channels().getOrDefault(m.channel(), List.of()),
                        at,
                        channel(m.channel()),
                        p);
            }
            if (m.campaignId() != null) {
                for (Limit l : rule.caps().campaigns()) {
                    distinct(out, l, m.campaignId(), at, p);
                }
            }
            return out;
        }

        /**
         * contract.md §6, "Distinct campaigns": the campaigns of the entries in each interval of
         * the window containing {@code at} (a calendar limit: in its local day), with its own.
         */
        void distinct(List<Violation> out, Limit l, String own, long at, int priority) {
            int most = 0;
            int withOwn = 0;
            List<long[]> starts = new ArrayList<>();
            if (l.isCalendar()) {
                LocalDate day = Instant.ofEpochMilli(at).atZone(zone).toLocalDate();
                starts.add(new long[] {Long.MIN_VALUE, Long.MAX_VALUE, day.toEpochDay()});
            } else {
                for (long s = at - l.windowMillis() + GRID; s <= at; s += GRID) {
                    starts.add(new long[] {s, s + l.windowMillis(), Long.MIN_VALUE});
                }
            }
            for (long[] interval : starts) {
                java.util.Set<String> in = new java.util.HashSet<>();
                for (int i = 0; i < counted.size(); i++) {
                    long e = counted.get(i)[0];
                    boolean inside =
                            l.isCalendar()
                                    ? Instant.ofEpochMilli(e)
                                                    .atZone(zone)
                                                    .toLocalDate()
                                                    .toEpochDay()
                                            == interval[2]
                                    : e >= interval[0] && e < interval[1];
                    if (inside && campaigns.get(i) != null) {
                        in.add(campaigns.get(i));
                    }
                }
                most = Math.max(most, in.size());
                in.add(own);
                withOwn = Math.max(withOwn, in.size());
            }
            int kept = kept(l, priority);
            if (withOwn > l.max() - kept) {
                out.add(violation("campaigns", l, most, kept));
            }
        }

        void check(List<Violation> out, String scope, List<Limit> limits, long at, int ch, int p) {
            long[] ts =
                    counted.stream()
                            .filter(e -> ch < 0 || e[1] == ch)
                            .mapToLong(e -> e[0])
                            .sorted()
                            .toArray();
            for (Limit l : limits) {
                int kept = kept(l, p);
                if (l.isCalendar()) {
                    LocalDate day = Instant.ofEpochMilli(at).atZone(zone).toLocalDate();
                    int n = 0;
                    for (long e : ts) {
                        n += Instant.ofEpochMilli(e).atZone(zone).toLocalDate().equals(day) ? 1 : 0;
                    }
                    if (n + 1 > l.max() - kept) {
                        out.add(violation(scope, l, n, kept));
                    }
                    continue;
                }
                int most = 0;
                for (long s = at - l.windowMillis() + GRID; s <= at; s += GRID) {
                    most = Math.max(most, inRange(ts, s, s + l.windowMillis()));
                }
                if (most + 1 > l.max() - kept) {
                    out.add(violation(scope, l, most, kept));
                }
            }
        }

        /**
         * contract.md §3 {@code reserve}: the places a limit keeps from a message below its
         * priority.
         */
        static int kept(Limit l, int priority) {
            return l.reserve() != null && priority < l.reserve().priority()
                    ? l.reserve().slots()
                    : 0;
        }

        static int kept(Limit l, OutboundMessage m) {
            return kept(l, m.priority());
        }

        /** contract.md §5: the max (lowered or not), the places kept, what fatigue lowered. */
        static Violation violation(String scope, Limit l, int count, int kept) {
            return new Violation.Exceeded(
                    scope, l.window(), l.calendar(), l.max(), count, kept, l.lowered());
        }

        /**
         * contract.md §3 {@code fatigue} read literally: u counts the counted messages sent in (e,
         * t], e the later of t − window and the last engagement; each of ⌊u / after⌋ steps
         * multiplies a max by the scale (exact decimals) and rounds down, never below min(floor,
         * max); a reserve keeps min(slots, lowered max) places.
         */
        Rule fatigued(Rule rule, long t) {
            Fatigue f = rule.fatigue();
            if (f == null) {
                return rule;
            }
            long e = Math.max(t - f.windowMillis(), lastEngagement);
            long u = counted.stream().filter(c -> c[0] > e && c[0] <= t).count();
            if (u / f.after() == 0) {
                return rule;
            }
            Map<String, List<Limit>> channels = new TreeMap<>();
            rule.caps().channels().forEach((k, v) -> channels.put(k, lowered(v, f, u)));
            Map<String, List<Limit>> categories = new TreeMap<>();
            rule.caps().categories().forEach((k, v) -> categories.put(k, lowered(v, f, u)));
            return new Rule(
                    rule.segment(),
                    new Rule.Caps(
                            lowered(rule.caps().all(), f, u),
                            channels,
                            categories,
                            lowered(rule.caps().campaign(), f, u),
                            lowered(rule.caps().campaigns(), f, u),
                            rule.caps().lifetime()),
                    rule.deferral(),
                    rule.preempt(),
                    f);
        }

        static List<Limit> lowered(List<Limit> limits, Fatigue f, long u) {
            BigDecimal scale = BigDecimal.valueOf(f.scaleHundredths(), 2);
            List<Limit> out = new ArrayList<>();
            for (Limit l : limits) {
                int bottom = Math.min(f.floor(), l.max());
                int m = l.max();
                for (long k = u / f.after(); k > 0 && m > bottom; k--) {
                    int next =
                            BigDecimal.valueOf(m)
                                    .multiply(scale)
                                    .setScale(0, RoundingMode.FLOOR)
                                    .intValueExact();
                    m = Math.max(bottom, next);
                }
                if (m == l.max()) {
                    out.add(l);
                    continue;
                }
                Limit.Reserve r = l.reserve();
                out.add(
                        new Limit(
                                l.window(),
                                l.windowMillis(),
                                m,
                                l.calendar(),
                                r == null
                                        ? null
                                        : new Limit.Reserve(Math.min(r.slots(), m), r.priority()),
                                0,
                                new Limit.Lowered(u, l.max()),
                                false));
            }
            return out;
        }

        static int inRange(long[] ts, long from, long until) {
            int lo = Arrays.binarySearch(ts, from - 1);
            int a = lo >= 0 ? lo + 1 : -lo - 1;
            while (a > 0 && ts[a - 1] >= from) {
                a--;
            }
            while (a < ts.length && ts[a] < from) {
                a++;
            }
            int b = a;
            while (b < ts.length && ts[b] < until) {
                b++;
            }
            return b - a;
        }

        int channel(String c) {
            return c.equals("push") ? 0 : 1;
        }

        /** The promise: no interval or local day ever holds more than max messages sent. */
        void assertNoPeriodOverfilled() {
            Rule rule = config.ruleFor("*");
            long[] ts = counted.stream().mapToLong(e -> e[0]).sorted().toArray();
            for (Limit l : rule.caps().all()) {
                for (long b : ts) {
                    if (l.isCalendar()) {
                        LocalDate day = Instant.ofEpochMilli(b).atZone(zone).toLocalDate();
                        long n =
                                Arrays.stream(ts)
                                        .filter(
                                                e ->
                                                        Instant.ofEpochMilli(e)
                                                                .atZone(zone)
                                                                .toLocalDate()
                                                                .equals(day))
                                        .count();
                        assertTrue(n <= l.max(), day + " holds " + n + " > " + l.max());
                    } else {
                        int n = inRange(ts, b, b + l.windowMillis());
                        assertTrue(n <= l.max(), "[" + b + ", +" + l.window() + ") holds " + n);
                    }
                }
            }
        }
    }
}
