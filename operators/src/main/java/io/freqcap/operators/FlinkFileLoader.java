package io.freqcap.operators;

import java.io.IOException;
import java.io.InputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/** Reads segment bitmaps through Flink's file systems: file://, s3://, hdfs://, ... */
public final class FlinkFileLoader implements SegmentTable.Loader {
    public static final FlinkFileLoader INSTANCE = new FlinkFileLoader();

    @Override
    public byte[] read(String uri) throws IOException {
        Path path = new Path(uri);
        FileSystem fs = path.getFileSystem();
        try (InputStream in = fs.open(path)) {
            return in.readAllBytes();
        }
    }
}
