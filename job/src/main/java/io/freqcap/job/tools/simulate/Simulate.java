package io.freqcap.job.tools.simulate;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.freqcap.job.FreqcapOptions;
import io.freqcap.job.FreqcapOptions.InvalidOptionException;
import io.freqcap.job.JobSettings;
import io.freqcap.job.KafkaClientConfig;
import io.freqcap.job.tools.ToolOptions;
import io.freqcap.operators.capping.Bounds;
import io.freqcap.operators.capping.decision.Decided;
import io.freqcap.operators.control.ControlHandler;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.config.LimitConfig;
import io.freqcap.schema.lifetime.LifetimeCount;
import io.freqcap.schema.message.FutureBound;
import io.freqcap.schema.message.InboundMessage;
import io.freqcap.schema.preference.UserPreferences;
import io.freqcap.schema.segment.SegmentUpdate;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.Configuration;

/**
 * {@code freqcap-simulate} (contract.md §8): replays a history of OutboundMessages through the
 * job's own decision code ({@link Backtest}) with a given config and segments, offline and without
 * Flink, and writes one decision line per input record, in input order. With {@code --compare} a
 * second config decides the same input independently (its own histories) and what changes between
 * the two is printed. The decisions and their lines are {@link Replay}'s, the comparison {@link
 * Changes}'.
 */
public final class Simulate {
    private Simulate() {}

    static final String USAGE =
            "usage: freqcap-simulate (--input FILE.jsonl | --bootstrap-servers HOST:PORT"
                    + " [--input-topic outbound-messages] [--from TIME] [--until TIME]"
                    + " [--kafka-config FILE])\n"
                    + "         --limits FILE [--segments FILE] [--preferences FILE.jsonl]"
                    + " [--receipts FILE.jsonl]"
                    + " [--compare FILE]"
                    + " --output FILE [--compare-output FILE] [--summary FILE.json]\n"
                    + "         [--max-record-bytes N] [--max-future 1d|off] [--max-segment-bytes N]"
                    + " [--segment-uris PREFIXES]\n"
                    + "         [--lifetime-retention 730d]\n"
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
                    "preferences",
                    "receipts",
                    "compare",
                    "output",
                    "compare-output",
                    "summary",
                    "max-record-bytes",
                    "max-future",
                    "lifetime-retention",
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
        ToolOptions.Parsed parsed =
                ToolOptions.parse("freqcap-simulate", USAGE, args, OPTIONS, out, err);
        if (parsed.exit() != null) {
            return parsed.exit();
        }
        Map<String, String> opts = parsed.options();
        Replay main;
        Replay other = null;
        // Each replay's final outcomes in input order, paired off for the changes between them.
        ArrayDeque<Decided> finalsA = new ArrayDeque<>();
        ArrayDeque<Decided> finalsB = new ArrayDeque<>();
        SimulationInput input;
        Bounds bounds;
        ReceiptReplay receipts;
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
            copy(opts, conf, "lifetime-retention", FreqcapOptions.LIFETIME_RETENTION.key());
            try {
                LifetimeCount.parseRetention(conf.get(FreqcapOptions.LIFETIME_RETENTION));
            } catch (IllegalArgumentException e) {
                throw new InvalidOptionException("--lifetime-retention: " + e.getMessage());
            }
            copy(opts, conf, "max-segment-bytes", FreqcapOptions.MAX_SEGMENT_BYTES.key());
            copy(opts, conf, "segment-uris", FreqcapOptions.SEGMENT_URIS.key());
            copy(opts, conf, "segments", FreqcapOptions.SEGMENTS.key());
            bounds = JobSettings.bounds(conf);
            String segmentsJson = JobSettings.readSegments(conf);
            List<SegmentUpdate> segments =
                    segmentsJson == null ? List.of() : ControlHandler.initialSegments(segmentsJson);
            Map<Long, UserPreferences> preferences =
                    opts.containsKey("preferences")
                            ? preferences(Path.of(opts.get("preferences")))
                            : Map.of();
            receipts =
                    opts.containsKey("receipts")
                            ? ReceiptReplay.read(Path.of(opts.get("receipts")))
                            : ReceiptReplay.none();
            main =
                    Replay.start(
                            config(opts, "limits"),
                            segments,
                            bounds,
                            opts.get("output"),
                            opts.containsKey("compare") ? finalsA::add : d -> {},
                            preferences);
            if (opts.containsKey("compare")) {
                other =
                        Replay.start(
                                config(opts, "compare"),
                                segments,
                                bounds,
                                opts.get("compare-output"),
                                finalsB::add,
                                preferences);
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
        long started = System.nanoTime();
        try (input;
                Replay a = main;
                Replay b = other;
                ParsedAhead ahead = new ParsedAhead(input, bounds)) {
            Changes changes = b == null ? null : new Changes();
            ParsedAhead.Parsed p;
            while ((p = ahead.next()) != null) {
                InboundMessage in = p.message();
                long length = p.length();
                if (!in.isMalformed()) {
                    receipts.before(
                            in.timestamp(),
                            r -> {
                                long latest = bounds.maxFuture().latest(System.currentTimeMillis());
                                a.receipt(r, latest);
                                if (b != null) {
                                    b.receipt(r, latest);
                                }
                            });
                }
                a.decide(in, length);
                if (b != null) {
                    b.decide(in, length);
                    pair(finalsA, finalsB, changes);
                }
            }
            a.finish();
            if (b != null) {
                b.finish();
                pair(finalsA, finalsB, changes);
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
                // As bytes: a name of a config's that is not well-formed Unicode is written as
                // '?', never refused by the encoder after the replay.
                Files.write(
                        Path.of(opts.get("summary")),
                        Json.MAPPER
                                .writerWithDefaultPrettyPrinter()
                                .writeValueAsString(json)
                                .getBytes(StandardCharsets.UTF_8));
            }
            return 0;
        } catch (IOException e) {
            err.println("freqcap-simulate: " + e.getMessage());
            return 1;
        }
    }

    /** Hands the changes each record's two final outcomes, as far as both are known. */
    private static void pair(ArrayDeque<Decided> a, ArrayDeque<Decided> b, Changes changes) {
        while (!a.isEmpty() && !b.isEmpty()) {
            changes.add(a.poll(), b.poll());
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

    /**
     * A JSONL file of UserPreferences records (contract.md §8, §10; no tombstones): the highest
     * version per user wins; an invalid line names itself.
     */
    static Map<Long, UserPreferences> preferences(Path file) throws InvalidOptionException {
        Map<Long, UserPreferences> out = new HashMap<>();
        List<String> lines = SimulationInput.lines(file, "preferences");
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank()) {
                continue;
            }
            try {
                UserPreferences p =
                        UserPreferences.parse(line.getBytes(StandardCharsets.UTF_8), null);
                out.merge(p.userId(), p, (a, b) -> b.version() > a.version() ? b : a);
            } catch (MalformedRecordException e) {
                throw new InvalidOptionException(
                        "--preferences: " + file + " line " + (i + 1) + ": " + e.getMessage());
            }
        }
        return out;
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
}
