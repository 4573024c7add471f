package io.freqcap.job.tools.segments;

import io.freqcap.schema.segment.SegmentBitmap;
import java.io.IOException;
import java.nio.file.Path;

/** Lets the benchmark time the same parser `segments build` uses. */
public final class SegmentsToolAccess {
    private SegmentsToolAccess() {}

    public static SegmentBitmap readIds(Path input) throws IOException {
        return SegmentsTool.readIds(input);
    }
}
