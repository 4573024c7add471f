package io.freqcap.schema.edges;

import io.freqcap.schema.edges.EdgeSequence.Advance;
import io.freqcap.schema.edges.EdgeSequence.Input;
import io.freqcap.schema.edges.EdgeSequence.Restore;
import io.freqcap.schema.edges.EdgeSequence.Start;
import io.freqcap.schema.edges.EdgeSequence.Step;
import io.freqcap.schema.edges.EdgeSequence.Sweep;
import java.time.Instant;
import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Makes the job's inputs at their edges from a seed: a start (the initial config, segments and
 * bounds) and a sequence of records on every input topic, with the wall clock moving on, snapshots
 * and restores (parallelism 1 to 2 to 1 in half of them) and sweeps in between. About half are
 * "coherent": a few users, one config whose {@code *} rule holds, is quiet at night, preempts and
 * counts campaigns, messages that collide around a DST change or midnight; the others are "wild".
 */
public final class EdgeSequences {
    private EdgeSequences() {}

    private static final long MINUTE = 60_000L;
    private static final long HOUR = 60 * MINUTE;
    private static final long DAY = 24 * HOUR;

    /** The contract's example night: 2025-11-22T22:10 in Berlin (§6). */
    static final long CONTRACT_NIGHT = 1_763_845_800_000L;

    /**
     * Lifetime limits, {@code end-campaign} and {@code --lifetime-retention} (contract v6) are
     * drawn from streams of their own, seeded from the sequence's seed with this, so that the
     * sequences drawn before them (and the seeds kept for what they found) stay as they were.
     */
    static final long LIFETIME_STREAM = 0x11FE_71AEL;

    /**
     * The sequence of one seed.
     *
     * @param maxSteps the longest sequence made (at least 10)
     */
    public static EdgeSequence generate(long seed, int maxSteps) {
        Random r = new Random(seed);
        boolean coherent = r.nextInt(10) < 6;
        EdgeValues v = coherent ? new EdgeValues(r, 0.05, 0.015) : new EdgeValues(r, 0.75, 0.1);
        int maxRecordBytes =
                coherent
                        ? v.one(List.of(1_000_000, 4096, 8192))
                        : v.one(List.of(4096, 4097, 6000, 1_000_000));
        String maxFuture = v.one(List.of("off", "off", "1d", "1d", "1s"));
        String zone = v.one(EdgeValues.ZONES);
        long base = base(r, zone, coherent);
        long clock = EdgeRecords.sat(base - r.nextInt((int) (2 * HOUR)));
        EdgeRecords records = new EdgeRecords(v, coherent, maxRecordBytes, base, zone);
        records.lifetimes = new Random(seed ^ LIFETIME_STREAM ^ 1);
        records.clockHint = clock;

        String initial = validConfig(r, zone, base, coherent, 1);
        String compare = r.nextInt(10) < 3 ? validConfig(r, zone, base, coherent, 2) : null;
        String segments = r.nextInt(10) < 4 ? initialSegments(r, zone, base, coherent) : null;
        Start start =
                new Start(
                        initial,
                        segments,
                        maxRecordBytes,
                        maxFuture,
                        r.nextBoolean(),
                        v.one(List.of(0, 1, 64, 1024)),
                        v.one(List.of(0L, 1L << 16, 256L << 20)),
                        clock,
                        compare,
                        // from a stream of its own: the draws of the main one stay as they were
                        List.of("730d", "730d", "1d", "3650d", "2d")
                                .get(new Random(seed ^ LIFETIME_STREAM).nextInt(5)));

        int n = 10 + r.nextInt(Math.max(1, maxSteps - 10));
        boolean rescales = r.nextBoolean();
        int parallelism = 1;
        long now = clock;
        List<Step> steps = new ArrayList<>(n + 2);
        for (int i = 0; i < n; i++) {
            if (rescales && (i == n / 3 || i == 2 * n / 3)) {
                parallelism = parallelism == 1 ? 2 : 1;
                steps.add(new Restore(parallelism));
            }
            int pick = r.nextInt(100);
            if (pick < 9) {
                now = advance(r, v, now, records.cursor, coherent);
                records.clockHint = now;
                steps.add(new Advance(now));
            } else if (pick < 11) {
                steps.add(new Restore(parallelism));
            } else if (pick < 12) {
                steps.add(new EdgeSequence.Crash());
            } else if (pick < 13) {
                long mark =
                        coherent || r.nextBoolean()
                                ? Math.min(now, records.cursor) - 5 * MINUTE
                                : v.one(
                                        List.of(
                                                Long.MAX_VALUE,
                                                0L,
                                                Long.MIN_VALUE + 1,
                                                EdgeValues.YEAR_10000));
                steps.add(new Sweep(mark));
            } else {
                steps.add(new Input(input(r, records, coherent)));
            }
        }
        return new EdgeSequence(seed, coherent ? "coherent" : "wild", start, steps);
    }

    private static EdgeInput input(Random r, EdgeRecords records, boolean coherent) {
        int pick = r.nextInt(100);
        if (pick < (coherent ? 55 : 45)) {
            return records.message();
        }
        pick = r.nextInt(100);
        if (pick < 25) {
            return records.preference();
        }
        if (pick < 43) {
            return records.receipt();
        }
        if (pick < 65) {
            return records.command();
        }
        if (pick < 83) {
            return records.configRecord();
        }
        return records.segmentUpdate();
    }

    /** The next wall clock: near the messages' time mostly, a leap or an edge sometimes. */
    private static long advance(Random r, EdgeValues v, long now, long cursor, boolean coherent) {
        long next;
        int pick = r.nextInt(20);
        if (pick == 0) {
            next = EdgeRecords.sat(now + DAY + r.nextInt((int) DAY));
        } else if (pick == 1 && !coherent) {
            next = v.one(List.of(EdgeValues.YEAR_10000, Long.MAX_VALUE - 1, Long.MAX_VALUE));
        } else {
            next = EdgeRecords.sat(cursor + r.nextInt((int) (3 * HOUR)) - HOUR);
        }
        return Math.max(now, next);
    }

    /**
     * Where a sequence's time starts: before a DST change of its zone, at the contract's Berlin
     * night, near the epoch, the year 10000 or the end of time.
     */
    static long base(Random r, String zone, boolean coherent) {
        int pick = r.nextInt(20);
        if (pick < (coherent ? 9 : 6)) {
            ZoneOffsetTransition t =
                    ZoneId.of(zone)
                            .getRules()
                            .nextTransition(Instant.parse("2025-06-01T00:00:00Z"));
            if (t != null) {
                return t.getInstant().toEpochMilli() - r.nextInt((int) (6 * HOUR));
            }
            return CONTRACT_NIGHT;
        }
        if (pick < 14) {
            return CONTRACT_NIGHT + r.nextInt((int) HOUR);
        }
        if (pick < 16) {
            return 3 * HOUR + r.nextInt((int) HOUR); // windows reach before the epoch
        }
        if (pick < 18) {
            return EdgeValues.YEAR_10000 - 6 * HOUR;
        }
        return Long.MAX_VALUE - 2 * DAY; // only --max-future off lets these in
    }

    /**
     * A config the contract calls valid: the coherent ones with every feature on the {@code *} rule
     * (hold, quiet hours, preempt, campaigns, often maxHeld and a reserve).
     */
    static String validConfig(Random r, String zone, long base, boolean coherent, long version) {
        for (int attempt = 0; attempt < 200; attempt++) {
            EdgeValues v = new EdgeValues(r, coherent ? 0.1 : 0.5, 0.0);
            EdgeRecords records = new EdgeRecords(v, coherent, 1_000_000, base, zone);
            records.lifetimes = new Random(base * 31 + version + attempt);
            records.lifetimesValid = true;
            Value c = records.config(version, coherent || r.nextBoolean());
            if (c.validity() == Validity.VALID) {
                return c.json();
            }
        }
        return "{\"version\":"
                + version
                + ",\"rules\":[{\"segment\":\"*\",\"limits\":"
                + "[{\"window\":\"1d\",\"max\":1}],\"hold\":\"1d\","
                + "\"quietHours\":{\"from\":\"21:00\",\"to\":\"08:00\"},\"preempt\":true}]}";
    }

    /** {@code --segments}: a JSON array of valid full loads. */
    static String initialSegments(Random r, String zone, long base, boolean coherent) {
        EdgeValues v = new EdgeValues(r, coherent ? 0.1 : 0.5, 0.0);
        EdgeRecords records = new EdgeRecords(v, coherent, 1_000_000, base, zone);
        StringBuilder b = new StringBuilder("[");
        int n = 1 + r.nextInt(2);
        int written = 0;
        java.util.Set<String> ids = new java.util.HashSet<>();
        for (int i = 0; i < 20 && written < n; i++) {
            String id = v.one(records.segments);
            if (!ids.add(id)) {
                continue;
            }
            Obj o = new Obj();
            o.put("segmentId", v.text(id));
            o.put("version", EdgeValues.num(1 + r.nextInt(3)));
            records.fullLoad(o);
            if (o.validity() == Validity.VALID && o.has("bitmap")) {
                b.append(written++ > 0 ? "," : "").append(o.json(r));
            }
        }
        return b.append(']').toString();
    }
}
