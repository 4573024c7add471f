package io.freqcap.operators.segments;

import io.freqcap.schema.config.ControlRecord;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/** What the segment tests share: loaders that do as a test says, a record that is no segment's. */
final class SegmentFixtures {
    private SegmentFixtures() {}

    /** What a test's loader does on each open: the file's bytes, or a failure. */
    interface Open {
        InputStream open() throws IOException;
    }

    /** A loader of files of at most {@code maxBytes}, each open of which is {@code open}'s. */
    static SegmentLoader loader(long maxBytes, Open open) {
        return new SegmentLoader() {
            @Override
            public InputStream open(String uri) throws IOException {
                return open.open();
            }

            @Override
            public long maxBytes() {
                return maxBytes;
            }
        };
    }

    /** An empty config record, as read at {@code offset} of the config topic. */
    static ControlRecord config(long offset) {
        return new ControlRecord(
                ControlRecord.Kind.CONFIG,
                "{}".getBytes(StandardCharsets.UTF_8),
                "limit-config",
                0,
                offset);
    }
}
