package io.freqcap.operators.segments;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Opens segment files through Flink's file systems ({@code file://}, {@code s3://}, {@code
 * hdfs://}, ...), bounded: only under the allowed uri prefixes ({@code --segment-uris}), only
 * regular files (a FIFO or {@code /dev/zero} would block or never end), and never more than {@code
 * maxBytes} ({@code --max-segment-bytes}; a length the file system reports over it is refused
 * before anything is read, and the read itself stops there too, since a length can lie).
 */
public final class FlinkFileLoader implements SegmentLoader, Serializable {
    private static final long serialVersionUID = 1L;

    /** The contract's default {@code --max-segment-bytes}: 1 GiB. */
    public static final long DEFAULT_MAX_BYTES = 1L << 30;

    /** Any uri, up to the default size: for tools and tests. */
    public static final FlinkFileLoader INSTANCE =
            new FlinkFileLoader(DEFAULT_MAX_BYTES, List.of());

    private final long maxBytes;
    private final List<String> allowedPrefixes;

    /**
     * @param maxBytes the largest file read
     * @param allowedPrefixes uri prefixes files may be read from; empty for any
     */
    public FlinkFileLoader(long maxBytes, List<String> allowedPrefixes) {
        if (maxBytes < 1) {
            throw new IllegalArgumentException("maxBytes must be positive, got " + maxBytes);
        }
        this.maxBytes = maxBytes;
        List<String> normalized = new ArrayList<>();
        for (String p : allowedPrefixes) {
            String n = normalize(p.trim());
            normalized.add(n.endsWith("/") ? n : n + "/");
        }
        this.allowedPrefixes = List.copyOf(normalized);
    }

    @Override
    public long maxBytes() {
        return maxBytes;
    }

    @Override
    public InputStream open(String uri) throws IOException {
        if (!allowed(uri)) {
            throw new IOException("not under the allowed --segment-uris prefixes");
        }
        Path path = new Path(uri);
        FileSystem fs = path.getFileSystem();
        if (!fs.isDistributedFS()) {
            java.nio.file.Path local = Paths.get(path.toUri().getPath());
            if (!Files.exists(local)) {
                throw new FileNotFoundException("no such file");
            }
            if (!Files.isRegularFile(local)) {
                throw new IOException("not a regular file");
            }
        }
        FileStatus status = fs.getFileStatus(path);
        if (status.isDir()) {
            throw new IOException("a directory, not a file");
        }
        if (status.getLen() > maxBytes) {
            throw new IOException(status.getLen() + " bytes, over --max-segment-bytes " + maxBytes);
        }
        return fs.open(path);
    }

    /** Whether a uri is under one of the allowed prefixes (after resolving "." and ".."). */
    public boolean allowed(String uri) {
        if (allowedPrefixes.isEmpty()) {
            return true;
        }
        String n;
        try {
            n = normalize(uri);
        } catch (IllegalArgumentException e) {
            return false;
        }
        for (String prefix : allowedPrefixes) {
            if (n.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /**
     * One spelling per location: a scheme ({@code file} when none), the authority, and the path
     * with "." and ".." resolved, so that {@code file:///data/../etc/passwd} is not under {@code
     * file:///data/}.
     */
    static String normalize(String uri) {
        URI u = new Path(uri).toUri();
        String scheme = u.getScheme() == null ? "file" : u.getScheme();
        String path = u.getPath() == null ? "/" : u.getPath();
        if ("file".equals(scheme) && !path.startsWith("/")) {
            path = new File(path).getAbsolutePath();
        }
        try {
            return new URI(scheme, u.getAuthority(), path, null, null).normalize().toString();
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("not a uri: " + e.getReason());
        }
    }
}
