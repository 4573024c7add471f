package io.freqcap.schema.edges;

import java.util.List;

/**
 * One run of the job's inputs: how the capping task is started and what happens to it, step by
 * step. Made by {@link EdgeSequences#generate} from a seed; shrunk by dropping steps.
 *
 * @param seed the seed it was made from ({@code -Dfuzz.seed=} makes it again)
 * @param shape how it was made: {@code coherent} (few users, one config with every feature,
 *     messages that collide) or {@code wild} (every field at its edges)
 */
public record EdgeSequence(long seed, String shape, Start start, List<Step> steps) {

    /**
     * How the task starts.
     *
     * @param initialConfig {@code --limits}: a config the contract calls valid
     * @param initialSegments {@code --segments}: a JSON array of full loads, or null
     * @param maxRecordBytes {@code --max-record-bytes}
     * @param maxFuture {@code --max-future}: {@code off} or a duration
     * @param mirror whether the Redis mirror is on
     * @param historyCacheSlots the history cache's slots (0: none)
     * @param liveHistoryBytes heap for long histories
     * @param clock the wall clock (processing time) at start
     * @param compareConfig a second valid config, for {@code freqcap-simulate --compare}, or null
     * @param lifetimeRetention {@code --lifetime-retention}: a duration of 1d..3650d
     */
    public record Start(
            String initialConfig,
            String initialSegments,
            int maxRecordBytes,
            String maxFuture,
            boolean mirror,
            int historyCacheSlots,
            long liveHistoryBytes,
            long clock,
            String compareConfig,
            String lifetimeRetention) {

        /** The same start without {@code --segments} and without a config to compare. */
        Start withoutSegments() {
            return with(null, mirror, historyCacheSlots, liveHistoryBytes, null);
        }

        /** The same start without the Redis mirror. */
        Start withoutMirror() {
            return with(initialSegments, false, historyCacheSlots, liveHistoryBytes, compareConfig);
        }

        /** The same start without a history cache, with ample heap for long histories. */
        Start withPlainCaches() {
            return with(initialSegments, mirror, 0, 256L << 20, compareConfig);
        }

        private Start with(
                String segments, boolean withMirror, int slots, long liveBytes, String compare) {
            return new Start(
                    initialConfig,
                    segments,
                    maxRecordBytes,
                    maxFuture,
                    withMirror,
                    slots,
                    liveBytes,
                    clock,
                    compare,
                    lifetimeRetention);
        }
    }

    /** What happens next. */
    public sealed interface Step permits Input, Advance, Restore, Sweep, Crash {}

    /** A record arrives on its topic. */
    public record Input(EdgeInput input) implements Step {
        @Override
        public String toString() {
            return input.toString();
        }
    }

    /** The wall clock (processing time) moves on to {@code to}: held messages due go out. */
    public record Advance(long to) implements Step {
        @Override
        public String toString() {
            return "advance the clock to " + to;
        }
    }

    /** Every task is snapshotted and the job restored from it at {@code parallelism}. */
    public record Restore(int parallelism) implements Step {
        @Override
        public String toString() {
            return "snapshot and restore at parallelism " + parallelism;
        }
    }

    /**
     * The job fails: it restarts from its latest checkpoint (the latest {@link Restore}'s), what it
     * wrote since is rolled back (exactly-once), and it reads the records since again.
     */
    public record Crash() implements Step {
        @Override
        public String toString() {
            return "crash: restart from the latest checkpoint and read what came since again";
        }
    }

    /** Event time reaches {@code watermark} and a cleanup tick sweeps the histories. */
    public record Sweep(long watermark) implements Step {
        @Override
        public String toString() {
            return "watermark " + watermark + ", then a sweep";
        }
    }

    public EdgeSequence withSteps(List<Step> fewer) {
        return new EdgeSequence(seed, shape, start, List.copyOf(fewer));
    }

    /** The same steps from a plainer start, where it still fails: for a shorter reproducer. */
    public List<EdgeSequence> plainerStarts() {
        return List.of(
                withStart(start.withoutSegments()),
                withStart(start.withoutMirror()),
                withStart(start.withPlainCaches()));
    }

    private EdgeSequence withStart(Start plainer) {
        return new EdgeSequence(seed, shape, plainer, steps);
    }

    /** The whole sequence, one line a step, long values cut, for a failure's report. */
    public String describe() {
        return describe(true);
    }

    /**
     * The whole sequence, one line a step.
     *
     * @param abbreviate cut values longer than 400 characters in the middle; without, the sequence
     *     is whole (values that are not UTF-8 as base64)
     */
    public String describe(boolean abbreviate) {
        StringBuilder b = new StringBuilder();
        b.append("seed ").append(seed).append(" (").append(shape).append(")\n");
        b.append("  --limits ").append(EdgeInput.cut(start.initialConfig(), abbreviate));
        b.append('\n');
        if (start.initialSegments() != null) {
            b.append("  --segments ")
                    .append(EdgeInput.cut(start.initialSegments(), abbreviate))
                    .append('\n');
        }
        b.append(
                String.format(
                        "  --max-record-bytes %d --max-future %s --lifetime-retention %s, mirror"
                                + " %s, history cache %d slots, live history bytes %d, clock %d%n",
                        start.maxRecordBytes(),
                        start.maxFuture(),
                        start.lifetimeRetention(),
                        start.mirror() ? "on" : "off",
                        start.historyCacheSlots(),
                        start.liveHistoryBytes(),
                        start.clock()));
        for (int i = 0; i < steps.size(); i++) {
            Step s = steps.get(i);
            String text = s instanceof Input in ? in.input().describe(abbreviate) : s.toString();
            b.append(String.format("  %3d %s%n", i, text));
        }
        return b.toString();
    }

    /** The records of the message topic, in order. */
    public List<EdgeInput> messages() {
        return inputs(EdgeInput.Topic.MESSAGES);
    }

    /** The records of one topic, in order. */
    public List<EdgeInput> inputs(EdgeInput.Topic topic) {
        return steps.stream()
                .filter(s -> s instanceof Input i && i.input().topic() == topic)
                .map(s -> ((Input) s).input())
                .toList();
    }
}
