package io.freqcap.job.tools.segments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.freqcap.schema.common.Json;
import io.freqcap.schema.common.MalformedRecordException;
import io.freqcap.schema.segment.SegmentBitmap;
import io.freqcap.schema.segment.SegmentUpdate;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SegmentsToolTest {
    @TempDir Path tmp;

    static String run(String... args) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        assertEquals(
                0, SegmentsTool.run(args, new PrintStream(bytes, true, StandardCharsets.UTF_8)));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void buildsFromTextAndCsvAndPicksTheFormat() throws Exception {
        Path txt = Files.writeString(tmp.resolve("ids.txt"), "42\n1001\r\n1002\n\n77000\n42\n");
        Path csv =
                Files.writeString(
                        tmp.resolve("ids.csv"), "userId,segment\n5,new\n9223372036854775807,new\n");
        Path small = tmp.resolve("small.roaring");
        Path wide = tmp.resolve("wide.roaring");
        assertTrue(
                run("build", "--input", txt.toString(), "--output", small.toString())
                        .contains("4 members, roaring32"));
        assertTrue(
                run("build", "--input", csv.toString(), "--output", wide.toString())
                        .contains("2 members, roaring64"));

        byte[] bytes = Files.readAllBytes(small);
        SegmentBitmap b = SegmentBitmap.read(bytes, SegmentBitmap.Format.ROARING32);
        assertTrue(b.contains(42) && b.contains(1001) && b.contains(1002) && b.contains(77000));
        SegmentBitmap w =
                SegmentBitmap.read(Files.readAllBytes(wide), SegmentBitmap.Format.ROARING64);
        assertTrue(w.contains(5) && w.contains(Long.MAX_VALUE));

        String inspected = run("inspect", small.toString());
        assertTrue(inspected.contains("format roaring32"), inspected);
        assertTrue(inspected.contains("cardinality 4"), inspected);
        assertTrue(inspected.contains("min 42") && inspected.contains("max 77000"), inspected);
    }

    @Test
    void diffEmitsChunkedAddAndRemoveUpdatesThatTurnOldIntoNew() throws Exception {
        Path old = tmp.resolve("old.roaring");
        Path neu = tmp.resolve("new.roaring");
        Files.write(old, SegmentBitmap.of(1, 2, 3, 4, 5).write(SegmentBitmap.Format.ROARING32));
        Files.write(
                neu, SegmentBitmap.of(4, 5, 6, 7, 8, 9, 10).write(SegmentBitmap.Format.ROARING32));
        String out =
                run(
                        "diff",
                        old.toString(),
                        neu.toString(),
                        "--segment-id",
                        "active",
                        "--version",
                        "13",
                        "--chunk",
                        "2");

        TreeSet<Long> members = new TreeSet<>(List.of(1L, 2L, 3L, 4L, 5L));
        List<Long> versions = new ArrayList<>();
        for (String line : out.strip().split("\n")) {
            SegmentUpdate u = SegmentUpdate.parse(line.getBytes(StandardCharsets.UTF_8));
            JsonNode n = Json.MAPPER.readTree(line);
            assertTrue(n.get("userIds").size() <= 2);
            versions.add(u.version());
            for (long id : u.userIds()) {
                if (u.op() == SegmentUpdate.Op.ADD) {
                    members.add(id);
                } else {
                    members.remove(id);
                }
            }
        }
        assertEquals(new TreeSet<>(List.of(4L, 5L, 6L, 7L, 8L, 9L, 10L)), members);
        assertEquals(List.of(13L, 14L, 15L, 16L, 17L), versions, "3 add chunks, 2 remove chunks");
    }

    @Test
    void inspectStreamsAFileLargerThanAnyArray() throws Exception {
        // A valid bitmap followed by 3 GB of zeros (sparse): once read whole into one array
        // (OutOfMemoryError past 2 GB), now read as a stream and refused for its trailing bytes.
        Path big = tmp.resolve("big.roaring");
        Files.write(big, SegmentBitmap.of(1, 2, 3).write(SegmentBitmap.Format.ROARING32));
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(big.toFile(), "rw")) {
            f.setLength(3L << 30);
        }
        MalformedRecordException e =
                org.junit.jupiter.api.Assertions.assertThrows(
                        MalformedRecordException.class, () -> run("inspect", big.toString()));
        assertTrue(e.getMessage().contains("roaring32"), e.getMessage());

        Path ok = tmp.resolve("ok.roaring");
        Files.write(ok, SegmentBitmap.of(1, 2, 3, 1L << 40).write(SegmentBitmap.Format.ROARING64));
        String out = run("inspect", ok.toString());
        assertTrue(out.contains("format roaring64"), out);
        assertTrue(out.contains("cardinality 4"), out);
    }
}
