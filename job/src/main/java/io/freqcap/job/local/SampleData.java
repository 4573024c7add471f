package io.freqcap.job.local;

import io.freqcap.schema.segment.SegmentBitmap;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.stream.LongStream;

/** What the local runner uses when it is given no limits or segments: a first config to try. */
public final class SampleData {
    private SampleData() {}

    /** The sample limit config (the README's first config), written into {@code work}. */
    public static Path limits(Path work) throws IOException {
        Path limits = work.resolve("sample-limit-config.json");
        try (InputStream in =
                SampleData.class.getResourceAsStream("/freqcap/sample-limit-config.json")) {
            Files.write(limits, in.readAllBytes());
        }
        return limits;
    }

    /**
     * Segments for the sample config's rules: the newest tenth of the users are "new", every third
     * user is "active" (new wins where both: higher priority).
     */
    public static Path segments(Path work, int users) throws IOException {
        long[] fresh = LongStream.range(users - users / 10, users).toArray();
        long[] active = LongStream.range(0, users).filter(u -> u % 3 == 0).toArray();
        String json =
                "[{\"segmentId\": \"new\", \"version\": 1, \"priority\": 30, \"format\": \"roaring32\","
                        + " \"bitmap\": \""
                        + base64(fresh)
                        + "\"},"
                        + " {\"segmentId\": \"active\", \"version\": 1, \"priority\": 20, \"format\": \"roaring32\","
                        + " \"bitmap\": \""
                        + base64(active)
                        + "\"}]";
        return Files.writeString(work.resolve("sample-segments.json"), json);
    }

    private static String base64(long[] ids) {
        return Base64.getEncoder()
                .encodeToString(SegmentBitmap.of(ids).write(SegmentBitmap.Format.ROARING32));
    }
}
