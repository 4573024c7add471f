package io.freqcap.job.tools.simulate;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.job.FreqcapOptions;
import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import io.freqcap.job.JobSettings;
import io.freqcap.job.KafkaClientConfig;
import io.freqcap.job.tools.ToolOptions;
import io.freqcap.operators.backtest.Backtest;
import io.freqcap.operators.capping.Bounds;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.control.ControlHandler;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.decision.AuditRecords;
import io.freqcap.schema.decision.Decision;
import io.freqcap.schema.decision.Verdict;
import io.freqcap.schema.message.FutureBound;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.message.OutboundMessage;
import io.freqcap.schema.message.RawRecord;
import io.freqcap.schema.segment.SegmentUpdate;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;

/**
 * {@code freqcap-simulate} (contract.md §8): replays a history of OutboundMessages through the
 * job's own decision code ({@link Backtest}) with a given config and segments, offline and without
 * Flink, and writes one decision line per input record, in input order. With {@code --compare} a
 * second config decides the same input independently (its own histories) and what changes between
 * the two is printed.
 *
 * <p>Why one long class: the tool's command line, its two inputs and its two outputs, each short;
 * the decisions themselves are the job's ({@code Backtest}).
 */
public final class Simulate {
    private Simulate() {}

    static final String USAGE =
            "usage: freqcap-simulate (--input FILE.jsonl | --bootstrap-servers HOST:PORT"
                    + " [--input-topic outbound-messages] [--from TIME] [--until TIME]"
                    + " [--kafka-config FILE])\n"
                    + "         --limits FILE [--segments FILE] [--compare FILE]"
                    + " --output FILE [--compare-output FILE] [--summary FILE.json]\n"
                    + "         [--max-record-bytes N] [--max-future 1d|off] [--max-segment-bytes N]"
                    + " [--segment-uris PREFIXES]\n"
                    + "  TIME: epoch milliseconds or an ISO-8601 instant (2026-11-16T00:00:00Z)";

    private static final Set<String> OPTIONS =
            Set.of(
                    "input",
                    "bootstrap-servers",
                    "input-topic",
                    "kafka-config",
                    "from",
                    "until",
                    "limits",
                    "segments",
                    "compare",
                    "output",
                    "compare-output",
                    "summary",
                    "max-record-bytes",
                    "max-future",
                    "max-segment-bytes",
                    "segment-uris");

    private static Map<String, String> kafkaConfig(Map<String, String> opts)
            throws InvalidOptionException {
        if (!opts.containsKey("kafka-config")) {
            return Map.of();
        }
        try {
            return KafkaClientConfig.read(Path.of(opts.get("kafka-config")));
        } catch (IOException | IllegalArgumentException e) {
            throw new InvalidOptionException(
                    "--kafka-config: cannot read "
                            + opts.get("kafka-config")
                            + ": "
                            + e.getMessage());
        }
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * @return the exit code: 0 done, 2 a bad command line or an unreadable input file
     */
    static int run(String[] args, PrintStream out, PrintStream err) {
        Map<String, String> opts;
        try {
            opts = ToolOptions.parse(args, OPTIONS);
        } catch (InvalidOptionException e) {
            err.println("freqcap-simulate: " + e.getMessage() + "\n" + USAGE);
            return 2;
        }
        if (opts == null) {
            out.println(USAGE);
            return 0;
        }
        Replay main;
        Replay other = null;
        SimulationInput input;
        Bounds bounds;
        try {
            if (opts.containsKey("input") == opts.containsKey("bootstrap-servers")) {
                throw new InvalidOptionException(
                        "give exactly one of --input and --bootstrap-servers");
            }
            for (String o : List.of("limits", "output")) {
                if (!opts.containsKey(o)) {
                    throw new InvalidOptionException("--" + o + " is required");
                }
            }
            if (opts.containsKey("compare-output") && !opts.containsKey("compare")) {
                throw new InvalidOptionException("--compare-output needs --compare");
            }
            Configuration conf = new Configuration();
            copy(opts, conf, "max-record-bytes", FreqcapOptions.MAX_RECORD_BYTES.key());
            copy(opts, conf, "max-future", FreqcapOptions.MAX_FUTURE.key());
            try {
                FutureBound.parse(conf.get(FreqcapOptions.MAX_FUTURE));
            } catch (IllegalArgumentException e) {
                throw new InvalidOptionException("--max-future: " + e.getMessage());
            }
            copy(opts, conf, "max-segment-bytes", FreqcapOptions.MAX_SEGMENT_BYTES.key());
            copy(opts, conf, "segment-uris", FreqcapOptions.SEGMENT_URIS.key());
            copy(opts, conf, "segments", FreqcapOptions.SEGMENTS.key());
            bounds = JobSettings.bounds(conf);
            String segmentsJson = JobSettings.readSegments(conf);
            List<SegmentUpdate> segments =
                    segmentsJson == null ? List.of() : ControlHandler.initialSegments(segmentsJson);
            main = Replay.start(config(opts, "limits"), segments, bounds, opts.get("output"));
            if (opts.containsKey("compare")) {
                other =
                        Replay.start(
                                config(opts, "compare"),
                                segments,
                                bounds,
                                opts.get("compare-output"));
            }
            input =
                    opts.containsKey("input")
                            ? SimulationInput.lines(
                                    Path.of(opts.get("input")), bounds.maxRecordBytes())
                            : SimulationInput.topic(
                                    opts.get("bootstrap-servers"),
                                    kafkaConfig(opts),
                                    opts.getOrDefault("input-topic", "outbound-messages"),
                                    time(opts, "from"),
                                    time(opts, "until"));
        } catch (InvalidOptionException | MalformedRecordException | IllegalArgumentException e) {
            err.println("freqcap-simulate: " + e.getMessage());
            return 2;
        } catch (IOException e) {
            err.println("freqcap-simulate: cannot read or write: " + e.getMessage());
            return 2;
        }
        try (input;
                Replay a = main;
                Replay b = other) {
            Changes changes = b == null ? null : new Changes();
            long started = System.nanoTime();
            RawRecord raw;
            while ((raw = input.next()) != null) {
                // The job's clock is the wall clock: so is simulate's, for --max-future.
                long length = input.lengthOf(raw);
                InboundMessage in =
                        raw.value() != null && length > raw.value().length
                                ? InboundMessage.tooLarge(raw, length, bounds.maxRecordBytes())
                                : InboundMessage.of(
                                        raw,
                                        bounds.maxRecordBytes(),
                                        bounds.maxFuture(),
                                        System.currentTimeMillis());
                if (in.isMalformed()) {
                    byte[] audit =
                            AuditRecords.malformed(in, length, bounds.maxRecordBytes()).json();
                    a.malformed(audit);
                    if (b != null) {
                        b.malformed(audit);
                        changes.add(Decision.MALFORMED, Decision.MALFORMED, null);
                    }
                    continue;
                }
                OutboundMessage m = in.message();
                Decision da = a.decide(in, m, bounds.maxRecordBytes());
                if (b != null) {
                    changes.add(da, b.decide(in, m, bounds.maxRecordBytes()), a.lastSegment);
                }
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            long n = a.summary.records();
            err.printf(
                    "freqcap-simulate: decided %,d records in %.1f s (%,.0f records/s)%n",
                    n, seconds, n / Math.max(seconds, 1e-9));
            a.summary.print(out, "limits");
            if (b != null) {
                b.summary.print(out, "compare");
                changes.print(out, a.summary, b.summary);
            }
            if (opts.containsKey("summary")) {
                ObjectNode json = JsonNodeFactory.instance.objectNode();
                json.set("limits", a.summary.toJson());
                if (b != null) {
                    json.set("compare", b.summary.toJson());
                    json.set("changes", changes.toJson());
                }
                Files.writeString(
                        Path.of(opts.get("summary")),
                        Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(json));
            }
            return 0;
        } catch (IOException e) {
            err.println("freqcap-simulate: " + e.getMessage());
            return 1;
        }
    }

    private static void copy(Map<String, String> opts, Configuration conf, String from, String to) {
        if (opts.containsKey(from)) {
            conf.setString(to, opts.get(from));
        }
    }

    private static LimitConfig config(Map<String, String> opts, String option)
            throws InvalidOptionException {
        String file = opts.get(option);
        try {
            return LimitConfig.parse(Files.readString(Path.of(file)));
        } catch (IOException e) {
            throw new InvalidOptionException(
                    "--" + option + ": cannot read " + file + ": " + e.getMessage());
        } catch (MalformedRecordException e) {
            throw new InvalidOptionException(
                    "--" + option + ": invalid config in " + file + ": " + e.getMessage());
        }
    }

    private static Long time(Map<String, String> opts, String option)
            throws InvalidOptionException {
        String v = opts.get(option);
        if (v == null) {
            return null;
        }
        try {
            return v.matches("\\d+") ? Long.parseLong(v) : Instant.parse(v).toEpochMilli();
        } catch (RuntimeException e) {
            throw new InvalidOptionException(
                    "--"
                            + option
                            + ": expected epoch milliseconds or an ISO-8601 instant, got "
                            + v);
        }
    }

    /** One config's backtest, its decision lines and its summary. */
    private static final class Replay implements AutoCloseable {
        private static final byte[] DECISION = ascii("{\"decision\":\"");
        private static final byte[] MESSAGE_ID = ascii("\",\"messageId\":\"");
        private static final byte[] USER_ID = ascii("\",\"userId\":");
        private static final byte[] SEGMENT = ascii(",\"segment\":\"");
        private static final byte[] VERSION = ascii("\",\"configVersion\":");
        private static final byte[] SHADOW = ascii(",\"shadow\":\"");
        private static final byte[] SEND_AT = ascii(",\"sendAt\":");

        final Backtest backtest;
        final SimulationSummary summary;
        private final OutputStream out;
        private final JsonStringEncoder encoder = JsonStringEncoder.getInstance();
        private final byte[] version;
        String lastSegment;

        private Replay(Backtest backtest, OutputStream out) {
            this.backtest = backtest;
            this.summary = new SimulationSummary(backtest.config().version());
            this.out = out;
            this.version = ascii(Long.toString(backtest.config().version()));
        }

        static Replay start(
                LimitConfig config, List<SegmentUpdate> segments, Bounds bounds, String output)
                throws IOException, MalformedRecordException {
            OutputStream out =
                    output == null
                            ? null
                            : new BufferedOutputStream(
                                    Files.newOutputStream(Path.of(output)), 1 << 20);
            return new Replay(
                    Backtest.start(config, segments, bounds.segmentLoader(), s -> {}), out);
        }

        void malformed(byte[] audit) throws IOException {
            summary.malformed();
            line(audit);
        }

        Decision decide(InboundMessage in, OutboundMessage m, int maxRecordBytes)
                throws IOException {
            Decided decided = backtest.decide(m);
            Verdict v = decided.verdict();
            Decision d = v.decision();
            lastSegment = v.segment();
            boolean shadowRejects =
                    v.shadow() != null && v.shadow().decision() == Decision.REJECTED;
            summary.add(m, d, v.segment(), shadowRejects, v.sendAt());
            if (out == null) {
                return d;
            }
            if (d == Decision.ALLOWED || d == Decision.EXEMPT) {
                // What the delivery's headers say (contract.md §5), as one line.
                out.write(DECISION);
                out.write(ascii(d.name()));
                out.write(MESSAGE_ID);
                out.write(encoder.quoteAsUTF8(m.messageId()));
                out.write(USER_ID);
                out.write(ascii(Long.toString(m.userId())));
                out.write(SEGMENT);
                out.write(encoder.quoteAsUTF8(v.segment()));
                out.write(VERSION);
                out.write(version);
                if (v.shadow() != null) {
                    out.write(SHADOW);
                    out.write(ascii(v.shadow().label()));
                    out.write('"');
                }
                if (v.sendAt() != null) {
                    out.write(SEND_AT);
                    out.write(ascii(Long.toString(v.sendAt())));
                }
                out.write('}');
                out.write('\n');
            } else {
                line(decided.audit(in.value(), maxRecordBytes).json());
            }
            return d;
        }

        private void line(byte[] json) throws IOException {
            if (out != null) {
                out.write(json);
                out.write('\n');
            }
        }

        @Override
        public void close() throws IOException {
            backtest.close();
            if (out != null) {
                out.close();
            }
        }
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** What changes from the {@code --limits} config to the {@code --compare} one. */
    private static final class Changes {
        private final long[][] moves = new long[Decision.values().length][Decision.values().length];
        private final Map<String, long[]> deliveredBySegment = new TreeMap<>();

        void add(Decision a, Decision b, String segment) {
            moves[a.ordinal()][b.ordinal()]++;
            if (segment != null) {
                long[] row = deliveredBySegment.computeIfAbsent(segment, s -> new long[2]);
                row[0] += delivered(a) ? 1 : 0;
                row[1] += delivered(b) ? 1 : 0;
            }
        }

        private static boolean delivered(Decision d) {
            return d == Decision.ALLOWED || d == Decision.EXEMPT;
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
                                    "    %-20s %,12d -> %,12d (%+,d)%n",
                                    s, r[0], r[1], r[1] - r[0]));
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
}
