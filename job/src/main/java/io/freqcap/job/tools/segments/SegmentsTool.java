package io.freqcap.job.tools.segments;

import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.segment.SegmentBitmap;
import io.freqcap.schema.segment.SegmentBitmap.Format;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Tools for the people who make segments:
 *
 * <pre>
 * segments build --input ids.txt --output new.roaring [--format roaring32|roaring64]
 * segments inspect FILE
 * segments diff OLD NEW --segment-id ID --version V [--chunk 10000]
 * </pre>
 *
 * {@code build} streams userIds (one per line; the first comma-separated column of a CSV; lines
 * that do not start with a digit, such as a header, are skipped), so memory is the bitmap's, not
 * the input's. {@code diff} prints add/remove SegmentUpdate JSON lines for the segments topic.
 */
public final class SegmentsTool {
    private SegmentsTool() {}

    public static void main(String[] args) {
        try {
            System.exit(run(args, System.out));
        } catch (IllegalArgumentException | IOException | MalformedRecordException e) {
            System.err.println("segments: " + e.getMessage());
            System.exit(2);
        }
    }

    public static int run(String[] args, PrintStream out)
            throws IOException, MalformedRecordException {
        if (args.length == 0 || args[0].equals("--help")) {
            out.println(
                    "usage: segments build --input FILE --output FILE [--format roaring32|roaring64]");
            out.println("       segments inspect FILE");
            out.println("       segments diff OLD NEW --segment-id ID --version V [--chunk N]");
            return args.length == 0 ? 2 : 0;
        }
        switch (args[0]) {
            case "build":
                return build(args, out);
            case "inspect":
                return inspect(Path.of(arg(args, 1, "FILE")), out);
            case "diff":
                return diff(args, out);
            default:
                throw new IllegalArgumentException(
                        "unknown command " + args[0] + " (build, inspect, diff)");
        }
    }

    private static String arg(String[] args, int i, String what) {
        if (args.length <= i) {
            throw new IllegalArgumentException("missing " + what);
        }
        return args[i];
    }

    private static String option(String[] args, String name, String dflt) {
        for (int i = 1; i < args.length - 1; i++) {
            if (args[i].equals(name)) {
                return args[i + 1];
            }
        }
        if (dflt == null) {
            throw new IllegalArgumentException("missing " + name);
        }
        return dflt;
    }

    static int build(String[] args, PrintStream out) throws IOException, MalformedRecordException {
        Path input = Path.of(option(args, "--input", null));
        Path output = Path.of(option(args, "--output", null));
        String format = option(args, "--format", "auto");
        long t0 = System.nanoTime();
        SegmentBitmap b = readIds(input);
        Format f =
                format.equals("auto")
                        ? (b.fitsRoaring32() ? Format.ROARING32 : Format.ROARING64)
                        : Format.of(format);
        byte[] bytes = b.write(f);
        Files.write(output, bytes);
        out.printf(
                Locale.ROOT,
                "%s: %,d members, %s, %,d bytes, %.2f bits/member, %.1f s%n",
                output,
                b.cardinality(),
                f.wireName,
                bytes.length,
                b.cardinality() == 0 ? 0.0 : 8.0 * bytes.length / b.cardinality(),
                (System.nanoTime() - t0) / 1e9);
        return 0;
    }

    /** Parses ids from bytes directly: 270 million lines in well under a minute. */
    static SegmentBitmap readIds(Path input) throws IOException {
        SegmentBitmap.Builder builder = new SegmentBitmap.Builder();
        try (InputStream in = new BufferedInputStream(Files.newInputStream(input), 1 << 20)) {
            byte[] buf = new byte[1 << 20];
            long value = 0;
            boolean inNumber = false;
            boolean skipLine = false;
            boolean lineStart = true;
            long line = 1;
            int n;
            while ((n = in.read(buf)) > 0) {
                for (int i = 0; i < n; i++) {
                    byte c = buf[i];
                    if (c == '\n') {
                        if (inNumber) {
                            builder.add(value);
                        }
                        value = 0;
                        inNumber = false;
                        skipLine = false;
                        lineStart = true;
                        line++;
                        continue;
                    }
                    if (skipLine) {
                        continue;
                    }
                    if (c >= '0' && c <= '9') {
                        if (value > (Long.MAX_VALUE - (c - '0')) / 10) {
                            throw new IOException("line " + line + ": userId above 2^63-1");
                        }
                        value = value * 10 + (c - '0');
                        inNumber = true;
                    } else if (lineStart && !inNumber && c != ' ' && c != '\r' && c != '\t') {
                        skipLine = true; // a header or a comment
                    } else if (inNumber) {
                        builder.add(value); // end of the first column
                        value = 0;
                        inNumber = false;
                        skipLine = true;
                    }
                    lineStart = lineStart && !inNumber && (c == ' ' || c == '\t');
                }
            }
            if (inNumber) {
                builder.add(value);
            }
        }
        return builder.build();
    }

    /** A bitmap file read as a stream: memory grows with its containers, not with its size. */
    record Read(SegmentBitmap bitmap, Format format, long bytes) {}

    static Read read(Path file) throws IOException, MalformedRecordException {
        long size = Files.size(file);
        try (java.io.BufferedInputStream in =
                new java.io.BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
            in.mark(4);
            byte[] head = in.readNBytes(4);
            in.reset();
            Format f = SegmentBitmap.detect(head);
            return new Read(SegmentBitmap.read(in, f, size), f, size);
        }
    }

    static SegmentBitmap readBitmap(Path file) throws IOException, MalformedRecordException {
        return read(file).bitmap();
    }

    static int inspect(Path file, PrintStream out) throws IOException, MalformedRecordException {
        Read r = read(file);
        Format f = r.format();
        SegmentBitmap b = r.bitmap();
        long bytes = r.bytes();
        out.printf(
                Locale.ROOT,
                "format %s%ncardinality %,d%nbytes %,d%nbits/member %.2f%nmin %d%nmax %d%n",
                f.wireName,
                b.cardinality(),
                bytes,
                b.cardinality() == 0 ? 0.0 : 8.0 * bytes / b.cardinality(),
                b.min(),
                b.max());
        return 0;
    }

    static int diff(String[] args, PrintStream out) throws IOException, MalformedRecordException {
        SegmentBitmap before = readBitmap(Path.of(arg(args, 1, "OLD")));
        SegmentBitmap after = readBitmap(Path.of(arg(args, 2, "NEW")));
        String id = option(args, "--segment-id", null);
        long version = Long.parseLong(option(args, "--version", null));
        int chunk = Integer.parseInt(option(args, "--chunk", "10000"));
        // Streamed: a chunk of ids at a time, never the whole difference.
        Emitter adds = new Emitter(out, id, version, "add", chunk);
        after.forEach(
                u -> {
                    if (!before.contains(u)) {
                        adds.add(u);
                    }
                });
        Emitter removes = new Emitter(out, id, adds.finish(), "remove", chunk);
        before.forEach(
                u -> {
                    if (!after.contains(u)) {
                        removes.add(u);
                    }
                });
        removes.finish();
        return 0;
    }

    /** Prints a SegmentUpdate line per {@code chunk} ids, versions counting up. */
    private static final class Emitter {
        private final PrintStream out;
        private final String id;
        private final String op;
        private final List<Long> ids;
        private final int chunk;
        private long version;

        Emitter(PrintStream out, String id, long version, String op, int chunk) {
            this.out = out;
            this.id = id;
            this.version = version;
            this.op = op;
            this.chunk = chunk;
            this.ids = new ArrayList<>(Math.min(chunk, 1 << 16));
        }

        void add(long u) {
            ids.add(u);
            if (ids.size() == chunk) {
                flush();
            }
        }

        /**
         * @return the next version
         */
        long finish() {
            flush();
            return version;
        }

        private void flush() {
            if (ids.isEmpty()) {
                return;
            }
            var node = Json.MAPPER.createObjectNode();
            node.put("segmentId", id);
            node.put("version", version++);
            node.put("op", op);
            var arr = node.putArray("userIds");
            ids.forEach(arr::add);
            out.println(node);
            ids.clear();
        }
    }
}
