package io.freqcap.operators.capping.rule;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.config.Rule;
import io.freqcap.schema.message.OutboundMessage;
import java.time.Instant;
import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;

/**
 * What the rule's property tests draw their runs from, so that each oracle is compared on the same
 * kind of traffic: one user's messages in zones with DST, half-hour and 45-minute offsets, under
 * random rules of holds, quiet hours, calendar days and campaigns ({@link SendTimePropertyTest}'s
 * oracle and those built on it); the limits a message falls under; and the check that a generator
 * reached every path it is meant to.
 */
final class PropertyFixtures {
    private PropertyFixtures() {}

    /**
     * The send-time oracle's grid: timestamps, windows, holds, quiet hours and the zones' offsets
     * and changes are whole multiples of it, so trying the grid is trying every instant.
     */
    static final long GRID = 5 * 60_000L;

    static final String[] ZONES = {
        "Europe/Berlin",
        "America/New_York",
        "America/St_Johns",
        "Australia/Lord_Howe",
        "Australia/Adelaide",
        "Pacific/Chatham",
        "Asia/Kathmandu",
        "Asia/Kolkata",
        "UTC"
    };

    static final String[] CHANNELS = {"push", "email"};

    static String randomZone(Random rnd) {
        return ZONES[rnd.nextInt(ZONES.length)];
    }

    /** One run of a property test: its number, its zone, its config, a start near a DST change. */
    record Run(int number, String zone, LimitConfig config, long start) {
        ZoneId zoneId() {
            return ZoneId.of(zone);
        }
    }

    /** How a property test draws a run's config in its zone. */
    interface ConfigDraw {
        LimitConfig draw(Random rnd, String zone) throws Exception;
    }

    /** What a property test does in one run, drawing from {@code rnd}. */
    interface RunBody {
        void run(Run run, Random rnd) throws Exception;
    }

    /**
     * {@code runs} runs from {@code seed}, each drawing its zone, its config and its start (in that
     * order), then doing {@code body}.
     */
    static void forEachRun(long seed, int runs, ConfigDraw configs, RunBody body) throws Exception {
        Random rnd = new Random(seed);
        for (int i = 0; i < runs; i++) {
            String zone = randomZone(rnd);
            LimitConfig config = configs.draw(rnd, zone);
            body.run(new Run(i, zone, config, nearDstChange(rnd, ZoneId.of(zone))), rnd);
        }
    }

    /** A grid instant within two days before one of the zone's DST changes in 2025-2027. */
    static long nearDstChange(Random rnd, ZoneId zone) {
        long base = Instant.parse("2025-01-01T00:00:00Z").toEpochMilli();
        List<Long> changes = new ArrayList<>();
        Instant at = Instant.ofEpochMilli(base);
        for (int i = 0; i < 6; i++) {
            ZoneOffsetTransition tr = zone.getRules().nextTransition(at);
            if (tr == null) {
                break;
            }
            changes.add(tr.getInstant().toEpochMilli());
            at = tr.getInstant();
        }
        long near =
                changes.isEmpty()
                        ? base + rnd.nextInt(700) * 86_400_000L
                        : changes.get(rnd.nextInt(changes.size()));
        return Math.floorDiv(near, GRID) * GRID - rnd.nextInt(2 * 24 * 12) * GRID;
    }

    /** The clock, or one time in five up to three hours behind it: a message stamped late. */
    static long stamped(Random rnd, long clock) {
        return clock - (rnd.nextInt(10) < 2 ? rnd.nextInt(36) * GRID : 0);
    }

    /**
     * A marketing message {@code id} of user 7 stamped {@code t}: on either channel, in {@code
     * zone} half the time, of campaign c0 to c2 three times in four, of one of {@code priorities}
     * (none given: priority 0).
     */
    static OutboundMessage randomMessage(
            Random rnd, String id, long t, String zone, int... priorities) {
        String channel = CHANNELS[rnd.nextInt(2)];
        String timezone = rnd.nextBoolean() ? zone : null;
        String campaign = rnd.nextInt(4) == 0 ? null : "c" + rnd.nextInt(3);
        int priority = priorities.length == 0 ? 0 : priorities[rnd.nextInt(priorities.length)];
        return new OutboundMessage(id, 7, channel, "marketing", t, timezone, campaign, priority);
    }

    static LimitConfig randomConfig(Random rnd, String zone) {
        return randomConfig(rnd, zone, PropertyFixtures::randomRule);
    }

    /**
     * A config in {@code zone} of one rule, and a shadow rule half the time, each {@code rule}'s.
     */
    static LimitConfig randomConfig(Random rnd, String zone, Function<Random, String> rule) {
        StringBuilder sb =
                new StringBuilder("{\"version\":1,\"timezone\":\"" + zone + "\",\"rules\":[");
        sb.append(rule.apply(rnd)).append(']');
        if (rnd.nextBoolean()) {
            sb.append(",\"shadow\":{\"rules\":[").append(rule.apply(rnd)).append("]}");
        }
        sb.append('}');
        try {
            return LimitConfig.parse(sb.toString());
        } catch (Exception e) {
            throw new IllegalArgumentException(sb.toString(), e);
        }
    }

    /**
     * A rule of {@code *}: a rolling limit of minutes, a calendar day a third of the time, an email
     * limit of hours, distinct campaigns, a hold and quiet hours, each at random.
     */
    static String randomRule(Random rnd) {
        StringBuilder sb = new StringBuilder("{\"segment\":\"*\",\"limits\":[");
        boolean calendar = rnd.nextInt(3) == 0;
        int windowMinutes = 15 * (1 + rnd.nextInt(12));
        int longest = calendar ? 3 * 24 * 60 : windowMinutes;
        sb.append("{\"window\":\"")
                .append(windowMinutes)
                .append("m\",\"max\":")
                .append(rnd.nextInt(15) == 0 ? 0 : 1 + rnd.nextInt(3))
                .append('}');
        if (calendar) {
            sb.append(",{\"calendar\":\"day\",\"max\":").append(2 + rnd.nextInt(4)).append('}');
        }
        sb.append(']');
        if (rnd.nextBoolean()) {
            int hours = 1 + rnd.nextInt(4);
            longest = Math.max(longest, hours * 60);
            sb.append(",\"channels\":{\"email\":[{\"window\":\"")
                    .append(hours)
                    .append("h\",\"max\":1}]}");
        }
        if (rnd.nextInt(3) == 0) {
            // At most one or two distinct campaigns (of c0, c1, c2) a local day or a few hours.
            sb.append(",\"campaigns\":[{")
                    .append(
                            rnd.nextBoolean()
                                    ? "\"calendar\":\"day\""
                                    : "\"window\":\"" + (1 + rnd.nextInt(4)) + "h\"")
                    .append(",\"max\":")
                    .append(1 + rnd.nextInt(2))
                    .append("}]");
        }
        if (rnd.nextInt(4) != 0) {
            // At most the longest window (a calendar day counts as 3d).
            int holdMinutes = 5 * (1 + rnd.nextInt(Math.min(longest, 24 * 60) / 5));
            sb.append(",\"hold\":\"").append(holdMinutes).append("m\"");
        }
        if (rnd.nextInt(4) != 0) {
            int from = rnd.nextInt(24 * 12) * 5;
            int to = (from + 5 * (1 + rnd.nextInt(20 * 12))) % (24 * 60);
            sb.append(",\"quietHours\":{\"from\":\"")
                    .append(hhmm(from))
                    .append("\",\"to\":\"")
                    .append(hhmm(to))
                    .append('"');
            if (rnd.nextBoolean()) {
                sb.append(",\"channels\":[\"push\"]");
            }
            sb.append('}');
        }
        return sb.append('}').toString();
    }

    static String hhmm(int minute) {
        return String.format("%02d:%02d", minute / 60, minute % 60);
    }

    /**
     * The limits of {@code rule} a message falls under: those of every message, of its channel and
     * category, and when it has a campaign those of its campaign and of distinct campaigns.
     */
    static List<Limit> limitsOf(Rule rule, OutboundMessage m) {
        List<Limit> all = new ArrayList<>(rule.caps().all());
        all.addAll(rule.channelLimits(m.channel()));
        all.addAll(rule.categoryLimits(m.category()));
        if (m.campaignId() != null) {
            all.addAll(rule.caps().campaign());
            all.addAll(rule.caps().campaigns());
        }
        return all;
    }

    /**
     * Asserts the generator reached each of {@code kinds} more than {@code times} times: else the
     * comparison proves little.
     */
    static void assertReached(Map<String, Integer> seen, int times, String... kinds) {
        for (String kind : kinds) {
            assertTrue(seen.getOrDefault(kind, 0) > times, kind + ": " + seen);
        }
    }
}
