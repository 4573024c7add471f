package io.freqcap.operators.capping.rule;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.freqcap.schema.config.Limit;
import io.freqcap.schema.config.Scope;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link RollingPasses}, asked times in ascending order, answers as the plain scan ({@link
 * IntervalScan#passes}) does at each: on seeded random entries (repeated timestamps, bursts, gaps),
 * windows and maxes (0 included), times before, among and after the entries, repeated.
 */
class RollingPassesPropertyTest {
    @Test
    void answersAsThePlainScanForAscendingTimes() {
        Random rnd = new Random(5858);
        int checked = 0;
        int failing = 0;
        for (int round = 0; round < 2_000; round++) {
            List<IntervalScan.Scoped> scopes = new ArrayList<>();
            for (int s = 0, n = 1 + rnd.nextInt(3); s < n; s++) {
                long[] ts = new long[rnd.nextInt(60)];
                long at = rnd.nextInt(1_000);
                for (int i = 0; i < ts.length; i++) {
                    at += rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(rnd.nextBoolean() ? 5 : 200);
                    ts[i] = at;
                }
                List<Limit> limits = new ArrayList<>();
                for (int l = 0, m = 1 + rnd.nextInt(2); l < m; l++) {
                    limits.add(
                            Limit.rolling(
                                    (1 + rnd.nextInt(300)) + "ms",
                                    1 + rnd.nextInt(300),
                                    rnd.nextInt(6)));
                }
                scopes.add(new IntervalScan.Scoped(Scope.ALL, limits, ts));
            }
            long[] times = new long[1 + rnd.nextInt(80)];
            for (int i = 0; i < times.length; i++) {
                times[i] = rnd.nextInt(12_000) - 500;
            }
            Arrays.sort(times);
            RollingPasses sweep = new RollingPasses(scopes);
            for (long t : times) {
                boolean plain = IntervalScan.passes(t, scopes);
                assertEquals(plain, sweep.test(t), "at " + t + " in round " + round);
                checked++;
                failing += plain ? 0 : 1;
            }
        }
        // Both answers are drawn often.
        assertEquals(
                true,
                failing > checked / 10 && failing < checked * 9 / 10,
                failing + "/" + checked);
    }
}
