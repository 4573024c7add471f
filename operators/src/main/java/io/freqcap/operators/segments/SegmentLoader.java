package io.freqcap.operators.segments;

import java.io.IOException;
import java.io.InputStream;

/** Opens the bytes behind a segment uri, within the bounds of {@link #maxBytes}. */
public interface SegmentLoader {
    /** The file behind the uri; the caller closes it. */
    InputStream open(String uri) throws IOException;

    /** The most bytes read from one uri. */
    long maxBytes();
}
