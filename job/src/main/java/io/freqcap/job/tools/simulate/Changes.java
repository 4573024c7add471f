package io.freqcap.job.tools.simulate;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.schema.decision.Decision;
import java.io.PrintStream;
import java.util.Map;
import java.util.TreeMap;

/** What changes from the {@code --limits} config to the {@code --compare} one. */
final class Changes {
    private final long[][] moves = new long[Decision.values().length][Decision.values().length];
    private final Map<String, long[]> deliveredBySegment = new TreeMap<>();

    /** One record's outcomes under the two configs. */
    void add(Decided a, Decided b) {
        moves[a.decision().ordinal()][b.decision().ordinal()]++;
        if (a.segment() != null) {
            long[] row = deliveredBySegment.computeIfAbsent(a.segment(), s -> new long[2]);
            row[0] += a.delivered() ? 1 : 0;
            row[1] += b.delivered() ? 1 : 0;
        }
    }

    long changed() {
        long n = 0;
        for (int i = 0; i < moves.length; i++) {
            for (int j = 0; j < moves.length; j++) {
                n += i == j ? 0 : moves[i][j];
            }
        }
        return n;
    }

    void print(PrintStream out, SimulationSummary a, SimulationSummary b) {
        out.printf(
                "changes from limits version %d to compare version %d:%n",
                a.configVersion, b.configVersion);
        long da = a.delivered();
        long db = b.delivered();
        out.printf(
                "  delivered: %,d -> %,d (%+,d, %s)%n",
                da, db, db - da, signedPercent(db - da, da));
        long[] newly = new long[1];
        long[] noLonger = new long[1];
        b.forEachCapped(u -> newly[0] += a.isCapped(u) ? 0 : 1);
        a.forEachCapped(u -> noLonger[0] += b.isCapped(u) ? 0 : 1);
        out.printf(
                "  users capped: %,d -> %,d (newly capped %,d, no longer capped %,d)%n",
                a.capped(), b.capped(), newly[0], noLonger[0]);
        out.printf(
                "  decided under a lowered cap (fatigue): %,d -> %,d%n",
                a.fatigued(), b.fatigued());
        out.printf("  records decided differently: %,d of %,d%n", changed(), a.records());
        for (Decision x : Decision.values()) {
            for (Decision y : Decision.values()) {
                if (x != y && moves[x.ordinal()][y.ordinal()] > 0) {
                    out.printf("    %-9s -> %-9s %,d%n", x, y, moves[x.ordinal()][y.ordinal()]);
                }
            }
        }
        out.println("  delivered by segment (segment under the limits config):");
        deliveredBySegment.forEach(
                (s, r) ->
                        out.printf(
                                "    %-20s %,12d -> %,12d (%+,d)%n", s, r[0], r[1], r[1] - r[0]));
    }

    private static String signedPercent(long delta, long whole) {
        return whole == 0 ? "n/a" : String.format("%+.1f%%", 100.0 * delta / whole);
    }

    ObjectNode toJson() {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("changed", changed());
        ObjectNode m = o.putObject("moves");
        for (Decision x : Decision.values()) {
            for (Decision y : Decision.values()) {
                if (x != y && moves[x.ordinal()][y.ordinal()] > 0) {
                    m.put(x + "->" + y, moves[x.ordinal()][y.ordinal()]);
                }
            }
        }
        ObjectNode s = o.putObject("deliveredBySegment");
        deliveredBySegment.forEach(
                (k, r) -> s.putObject(k).put("limits", r[0]).put("compare", r[1]));
        return o;
    }
}
